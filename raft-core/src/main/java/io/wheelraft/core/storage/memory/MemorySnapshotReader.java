package io.wheelraft.core.storage.memory;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.proto.SnapshotMeta;

import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads one published snapshot held in memory. The snapshot is immutable, so any number of
 * readers may read it concurrently from any threads, even after a newer snapshot replaced it.
 */
final class MemorySnapshotReader implements SnapshotReader {

    private final StoredSnapshot snapshot;
    private volatile boolean closed;

    MemorySnapshotReader(StoredSnapshot snapshot) {
        this.snapshot = snapshot;
    }

    @Override
    public SnapshotMeta meta() {
        return snapshot.meta();
    }

    @Override
    public InputStream openFile(String name) throws IOException {
        return new ByteArrayInputStream(file(name));
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code offset} is negative or past the end of the file, or {@code maxBytes < 1}
     */
    @Override
    public ByteString readChunk(String name, long offset, int maxBytes) throws IOException {
        byte[] data = file(name);
        if (offset < 0 || offset > data.length) {
            throw new IllegalArgumentException("offset " + offset + " is outside snapshot file '" + name
                    + "' of " + data.length + " bytes");
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be positive, got " + maxBytes);
        }
        int length = (int) Math.min(maxBytes, data.length - offset);
        return ByteString.copyFrom(data, (int) offset, length);
    }

    @Override
    public void close() {
        closed = true;
    }

    private byte[] file(String name) throws IOException {
        if (closed) {
            throw new IOException("snapshot reader at index " + snapshot.meta().getLastIncludedIndex() + " is closed");
        }
        byte[] data = snapshot.files().get(name);
        if (data == null) {
            throw new FileNotFoundException("snapshot at index " + snapshot.meta().getLastIncludedIndex()
                    + " has no file '" + name + "'");
        }
        return data;
    }
}
