package io.wheelraft.core.storage.memory;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Receives the chunks of a snapshot sent by the leader into byte arrays, in offset order per
 * file, and publishes it on {@link #complete()} once every file matches the meta's size and
 * CRC32C. A receiver interrupted by a lost chunk is resumed by asking {@link #nextOffset}; the
 * storage hands the same receiver back for the same meta. Used by one thread at a time.
 */
final class MemorySnapshotReceiver implements SnapshotReceiver {

    private final MemorySnapshotStorage storage;
    private final SnapshotMeta meta;
    private final Map<String, SnapshotFile> expected = new LinkedHashMap<>();
    private final Map<String, ByteArrayOutputStream> received = new LinkedHashMap<>();
    private String finishedAs;

    MemorySnapshotReceiver(MemorySnapshotStorage storage, SnapshotMeta meta) {
        this.storage = storage;
        this.meta = meta;
        for (SnapshotFile f : meta.getFilesList()) {
            expected.put(f.getName(), f);
            received.put(f.getName(), new ByteArrayOutputStream());
        }
    }

    SnapshotMeta meta() {
        return meta;
    }

    @Override
    public synchronized long nextOffset(String name) {
        checkNotFinished();
        return buffer(name).size();
    }

    /**
     * {@inheritDoc}
     *
     * @throws LogCorruptionException if the chunk would make the file longer than the meta says
     */
    @Override
    public synchronized void writeChunk(String name, long offset, ByteString data) throws IOException {
        checkNotFinished();
        ByteArrayOutputStream buffer = buffer(name);
        if (offset != buffer.size()) {
            throw new IllegalArgumentException("chunk of snapshot file '" + name + "' starts at offset " + offset
                    + " but the next expected offset is " + buffer.size());
        }
        long size = expected.get(name).getSize();
        if (offset + data.size() > size) {
            throw new LogCorruptionException("chunk of snapshot file '" + name + "' at offset " + offset + " with "
                    + data.size() + " bytes runs past the file size " + size + " given in the snapshot meta");
        }
        storage.faults().beforeWrite();
        data.writeTo(buffer);
    }

    @Override
    public synchronized SnapshotReader complete() throws IOException {
        checkNotFinished();
        storage.faults().beforeWrite();
        Map<String, byte[]> contents = new LinkedHashMap<>();
        for (SnapshotFile f : expected.values()) {
            byte[] data = received.get(f.getName()).toByteArray();
            if (data.length != f.getSize()) {
                throw corrupt("snapshot file '" + f.getName() + "' has " + data.length + " bytes but the meta says "
                        + f.getSize() + " (snapshot at index " + meta.getLastIncludedIndex() + ")");
            }
            int crc = StoredSnapshot.crc32c(data);
            if (crc != f.getCrc32C()) {
                throw corrupt("snapshot file '" + f.getName() + "' has CRC32C " + Integer.toUnsignedString(crc, 16)
                        + " but the meta says " + Integer.toUnsignedString(f.getCrc32C(), 16)
                        + " (snapshot at index " + meta.getLastIncludedIndex() + ")");
            }
            contents.put(f.getName(), data);
        }
        StoredSnapshot snapshot = new StoredSnapshot(meta, contents);
        storage.publish(snapshot);
        finish("completed");
        return new MemorySnapshotReader(snapshot);
    }

    @Override
    public synchronized void abort() {
        if (finishedAs == null) {
            finish("aborted");
        }
    }

    /** A corrupt transfer cannot be resumed: what was received is discarded so the next receive starts over. */
    private LogCorruptionException corrupt(String message) {
        finish("discarded after a verification failure");
        return new LogCorruptionException(message);
    }

    private void finish(String how) {
        finishedAs = how;
        received.clear();
        storage.finished(this);
    }

    private ByteArrayOutputStream buffer(String name) {
        ByteArrayOutputStream buffer = received.get(name);
        if (buffer == null) {
            throw new IllegalArgumentException("snapshot at index " + meta.getLastIncludedIndex()
                    + " has no file '" + name + "' in its meta");
        }
        return buffer;
    }

    private void checkNotFinished() {
        if (finishedAs != null) {
            throw new IllegalStateException("snapshot receiver for index " + meta.getLastIncludedIndex()
                    + " is already " + finishedAs);
        }
    }
}
