package io.wheelraft.storage;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes InstallSnapshot chunks into a temporary directory of a {@link LocalSnapshotStorage}.
 * Chunks of a file must arrive in order; an interrupted transfer resumes at {@link #nextOffset}
 * when the storage is asked to receive the same meta again. {@link #complete()} checks every
 * file's size and CRC32C against the meta before publishing. Used by one thread at a time.
 */
final class LocalSnapshotReceiver implements SnapshotReceiver {

    private final LocalSnapshotStorage storage;
    private final Path temp;
    private final SnapshotMeta meta;
    private final Map<String, SnapshotFile> expected = new HashMap<>();
    private final Map<String, Long> received = new HashMap<>();
    private boolean finished;

    LocalSnapshotReceiver(LocalSnapshotStorage storage, Path temp, SnapshotMeta meta) {
        if (meta.getLastIncludedIndex() < 1 || meta.getLastIncludedTerm() < 1) {
            throw new IllegalArgumentException("snapshot meta needs a last included index and term of at least 1, got "
                    + meta.getLastIncludedIndex() + "/" + meta.getLastIncludedTerm());
        }
        for (SnapshotFile f : meta.getFilesList()) {
            SnapshotFiles.resolve(temp, f.getName());
            if (expected.put(f.getName(), f) != null) {
                throw new IllegalArgumentException("snapshot meta lists file '" + f.getName() + "' twice");
            }
        }
        this.storage = storage;
        this.temp = temp;
        this.meta = meta;
    }

    SnapshotMeta meta() {
        return meta;
    }

    synchronized boolean isActive() {
        return !finished;
    }

    @Override
    public synchronized long nextOffset(String name) {
        fileOf(name);
        return received.getOrDefault(name, 0L);
    }

    @Override
    public synchronized void writeChunk(String name, long offset, ByteString data) throws IOException {
        checkActive();
        SnapshotFile file = fileOf(name);
        long next = received.getOrDefault(name, 0L);
        if (offset != next) {
            throw new IllegalArgumentException("chunk of snapshot file '" + name + "' starts at " + offset
                    + " but the next expected offset is " + next);
        }
        if (offset + data.size() > file.getSize()) {
            throw new IllegalArgumentException("chunk of snapshot file '" + name + "' at " + offset + " with "
                    + data.size() + " bytes runs past its size " + file.getSize());
        }
        Path path = SnapshotFiles.resolve(temp, name);
        Files.createDirectories(path.getParent());
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer buf = data.asReadOnlyByteBuffer();
            long position = offset;
            while (buf.hasRemaining()) {
                position += ch.write(buf, position);
            }
        }
        received.put(name, offset + data.size());
    }

    @Override
    public SnapshotReader complete() throws IOException {
        // Never hold this receiver's lock while taking the storage's (the storage takes them the
        // other way round when it aborts a superseded receiver).
        synchronized (this) {
            checkActive();
            verifyAll();
            finished = true;
        }
        storage.receiverFinished(this);
        try {
            return storage.publish(temp, meta, true);
        } catch (IOException | RuntimeException e) {
            SnapshotFiles.deleteRecursively(temp);
            throw e;
        }
    }

    private void verifyAll() throws IOException {
        for (SnapshotFile f : meta.getFilesList()) {
            Path path = SnapshotFiles.resolve(temp, f.getName());
            if (!Files.exists(path)) {
                if (f.getSize() != 0) {
                    throw new LogCorruptionException("received snapshot file " + path + " is missing; its meta says "
                            + f.getSize() + " bytes");
                }
                Files.createDirectories(path.getParent());
                Files.createFile(path);
            }
            SnapshotFile actual = SnapshotFiles.describe(f.getName(), path);
            if (actual.getSize() != f.getSize() || actual.getCrc32C() != f.getCrc32C()) {
                throw new LogCorruptionException(String.format(
                        "received snapshot file %s does not match its meta: %d bytes crc32c %08x, expected %d bytes crc32c %08x",
                        path, actual.getSize(), actual.getCrc32C(), f.getSize(), f.getCrc32C()));
            }
        }
    }

    @Override
    public void abort() {
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
        }
        storage.receiverFinished(this);
        try {
            SnapshotFiles.deleteRecursively(temp);
        } catch (IOException e) {
            org.slf4j.LoggerFactory.getLogger(LocalSnapshotReceiver.class)
                    .warn("Could not delete aborted snapshot {} (removed at next start-up): {}", temp, e.toString());
        }
    }

    private SnapshotFile fileOf(String name) {
        SnapshotFile f = expected.get(name);
        if (f == null) {
            throw new IllegalArgumentException("snapshot at index " + meta.getLastIncludedIndex() + " has no file '" + name + "'");
        }
        return f;
    }

    private void checkActive() {
        if (finished) {
            throw new IllegalStateException("snapshot receiver of " + temp + " was already completed or aborted");
        }
    }
}
