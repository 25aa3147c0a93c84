package io.wheelraft.core.storage.memory;

import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.SnapshotMeta;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Collects the files of a snapshot being saved into byte arrays; publishes them on
 * {@link #commit}. Used by one thread at a time (the state machine's onSnapshotSave and then
 * whoever commits); its output streams refuse writes once the writer is committed or aborted.
 */
final class MemorySnapshotWriter implements SnapshotWriter {

    private final MemorySnapshotStorage storage;
    private final Map<String, ByteArrayOutputStream> files = new LinkedHashMap<>();
    private volatile String finishedAs;

    MemorySnapshotWriter(MemorySnapshotStorage storage) {
        this.storage = storage;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if the name is not a plain relative path or was already added
     */
    @Override
    public synchronized OutputStream addFile(String name) throws IOException {
        checkNotFinished();
        SnapshotFileNames.validate(name);
        if (files.containsKey(name)) {
            throw new IllegalArgumentException("snapshot file '" + name + "' was already added to this snapshot");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        files.put(name, bytes);
        return new FileStream(name, bytes);
    }

    @Override
    public synchronized SnapshotMeta commit(SnapshotMeta meta) throws IOException {
        Objects.requireNonNull(meta, "meta");
        checkNotFinished();
        storage.faults().beforeWrite();
        SnapshotMeta.Builder stored = meta.toBuilder().clearFiles();
        Map<String, byte[]> contents = new LinkedHashMap<>();
        for (Map.Entry<String, ByteArrayOutputStream> f : files.entrySet()) {
            byte[] data = f.getValue().toByteArray();
            contents.put(f.getKey(), data);
            stored.addFiles(StoredSnapshot.describe(f.getKey(), data));
        }
        SnapshotMeta result = stored.build();
        storage.publish(new StoredSnapshot(result, contents));
        finishedAs = "committed";
        return result;
    }

    @Override
    public synchronized void abort() {
        if (finishedAs == null) {
            finishedAs = "aborted";
            files.clear();
        }
    }

    private void checkNotFinished() throws IOException {
        String state = finishedAs;
        if (state != null) {
            throw new IOException("snapshot writer is already " + state);
        }
    }

    /** A file being written; writes after commit or abort fail instead of being lost silently. */
    private final class FileStream extends OutputStream {
        private final String name;
        private final ByteArrayOutputStream bytes;

        FileStream(String name, ByteArrayOutputStream bytes) {
            this.name = name;
            this.bytes = bytes;
        }

        @Override
        public void write(int b) throws IOException {
            check();
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            check();
            bytes.write(b, off, len);
        }

        private void check() throws IOException {
            String state = finishedAs;
            if (state != null) {
                throw new IOException("cannot write snapshot file '" + name + "': the snapshot is already " + state);
            }
        }
    }
}
