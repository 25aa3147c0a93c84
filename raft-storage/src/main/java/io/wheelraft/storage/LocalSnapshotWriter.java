package io.wheelraft.storage;

import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.SnapshotMeta;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects the files of a snapshot the state machine is saving, in a temporary directory of a
 * {@link LocalSnapshotStorage}. {@link #commit} computes each file's size and CRC32C from disk,
 * fsyncs everything and publishes the directory; {@link #abort} deletes it. Used by one thread.
 */
final class LocalSnapshotWriter implements SnapshotWriter {

    private final LocalSnapshotStorage storage;
    private final Path temp;
    private final Map<String, TrackedStream> files = new LinkedHashMap<>();
    private boolean finished;

    LocalSnapshotWriter(LocalSnapshotStorage storage, Path temp) {
        this.storage = storage;
        this.temp = temp;
    }

    @Override
    public OutputStream addFile(String name) throws IOException {
        checkActive();
        Path path = SnapshotFiles.resolve(temp, name);
        if (files.containsKey(name)) {
            throw new IllegalArgumentException("snapshot file '" + name + "' was already added to " + temp);
        }
        Files.createDirectories(path.getParent());
        TrackedStream out = new TrackedStream(Files.newOutputStream(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE));
        files.put(name, out);
        return out;
    }

    @Override
    public SnapshotMeta commit(SnapshotMeta meta) throws IOException {
        checkActive();
        if (meta == null || meta.getLastIncludedIndex() < 1 || meta.getLastIncludedTerm() < 1) {
            throw new IllegalArgumentException("snapshot meta needs a last included index and term of at least 1, got "
                    + (meta == null ? "null" : meta.getLastIncludedIndex() + "/" + meta.getLastIncludedTerm()));
        }
        List<io.wheelraft.proto.SnapshotFile> described = new ArrayList<>();
        for (Map.Entry<String, TrackedStream> file : files.entrySet()) {
            if (!file.getValue().closed) {
                throw new IllegalStateException("snapshot file '" + file.getKey() + "' is still open; close it before commit");
            }
            described.add(SnapshotFiles.describe(file.getKey(), SnapshotFiles.resolve(temp, file.getKey())));
        }
        SnapshotMeta stored = meta.toBuilder().clearFiles().addAllFiles(described).build();
        finished = true;
        try {
            storage.publish(temp, stored, false);
        } catch (IOException | RuntimeException e) {
            SnapshotFiles.deleteRecursively(temp);
            throw e;
        }
        return stored;
    }

    @Override
    public void abort() {
        if (finished) {
            return;
        }
        finished = true;
        for (TrackedStream out : files.values()) {
            try {
                out.close();
            } catch (IOException ignored) {
                // the directory is deleted next
            }
        }
        try {
            SnapshotFiles.deleteRecursively(temp);
        } catch (IOException e) {
            org.slf4j.LoggerFactory.getLogger(LocalSnapshotWriter.class)
                    .warn("Could not delete aborted snapshot {} (removed at next start-up): {}", temp, e.toString());
        }
    }

    private void checkActive() {
        if (finished) {
            throw new IllegalStateException("snapshot writer of " + temp + " was already committed or aborted");
        }
    }

    /** Buffers writes and remembers whether the caller closed it. */
    private static final class TrackedStream extends FilterOutputStream {
        private boolean closed;

        TrackedStream(OutputStream out) {
            super(new BufferedOutputStream(out, 64 * 1024));
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                super.close();
            }
        }
    }
}
