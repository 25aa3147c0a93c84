package io.wheelraft.storage;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Reads one published snapshot. {@link #openFile} streams verify the file's CRC32C and size when
 * they reach the end; {@link #readChunk} serves InstallSnapshot chunks (the receiver verifies the
 * whole file). While a reader is open its snapshot is not deleted. Thread-safe: any number of
 * threads may read chunks concurrently.
 */
final class LocalSnapshotReader implements SnapshotReader {

    private final LocalSnapshotStorage storage;
    private final long seq;
    private final Path dir;
    private final SnapshotMeta meta;
    private boolean closed;

    LocalSnapshotReader(LocalSnapshotStorage storage, long seq, Path dir, SnapshotMeta meta) {
        this.storage = storage;
        this.seq = seq;
        this.dir = dir;
        this.meta = meta;
    }

    @Override
    public SnapshotMeta meta() {
        return meta;
    }

    /** The directory holding this snapshot's files. */
    Path directory() {
        return dir;
    }

    @Override
    public InputStream openFile(String name) throws IOException {
        SnapshotFile file = fileOf(name);
        Path path = SnapshotFiles.resolve(dir, name);
        try {
            return new VerifyingStream(Files.newInputStream(path), file, path);
        } catch (NoSuchFileException e) {
            throw new LogCorruptionException("snapshot file " + path + " is missing (listed in the meta of " + dir + ")");
        }
    }

    @Override
    public ByteString readChunk(String name, long offset, int maxBytes) throws IOException {
        SnapshotFile file = fileOf(name);
        if (offset < 0 || offset > file.getSize()) {
            throw new IllegalArgumentException("offset " + offset + " is outside snapshot file '" + name + "' of "
                    + file.getSize() + " bytes");
        }
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive, got " + maxBytes);
        }
        int length = (int) Math.min(maxBytes, file.getSize() - offset);
        if (length == 0) {
            return ByteString.EMPTY;
        }
        Path path = SnapshotFiles.resolve(dir, name);
        ByteBuffer buf = ByteBuffer.allocate(length);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            while (buf.hasRemaining()) {
                if (ch.read(buf, offset + buf.position()) < 0) {
                    throw new LogCorruptionException("snapshot file " + path + " ends at " + (offset + buf.position())
                            + " bytes, its meta says " + file.getSize());
                }
            }
        } catch (NoSuchFileException e) {
            throw new LogCorruptionException("snapshot file " + path + " is missing (listed in the meta of " + dir + ")");
        }
        buf.flip();
        return ByteString.copyFrom(buf);
    }

    private SnapshotFile fileOf(String name) {
        for (SnapshotFile f : meta.getFilesList()) {
            if (f.getName().equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("snapshot " + dir + " has no file '" + name + "'");
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        storage.readerClosed(seq);
    }

    @Override
    public String toString() {
        return "LocalSnapshotReader{" + dir + ", index=" + meta.getLastIncludedIndex() + '}';
    }

    /** Computes the CRC32C while the caller reads and checks it, with the size, at the end. */
    private static final class VerifyingStream extends FilterInputStream {
        private final SnapshotFile expected;
        private final Path path;
        private final CRC32C crc = new CRC32C();
        private long size;
        private boolean verified;

        VerifyingStream(InputStream in, SnapshotFile expected, Path path) {
            super(in);
            this.expected = expected;
            this.path = path;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b < 0) {
                verify();
            } else {
                crc.update(b);
                size++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n < 0) {
                verify();
            } else {
                crc.update(b, off, n);
                size += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            // Skipping would leave the checksum incomplete: read through instead.
            byte[] sink = new byte[(int) Math.min(8192, Math.max(n, 0))];
            long skipped = 0;
            while (skipped < n) {
                int r = read(sink, 0, (int) Math.min(sink.length, n - skipped));
                if (r < 0) {
                    break;
                }
                skipped += r;
            }
            return skipped;
        }

        @Override
        public boolean markSupported() {
            return false;
        }

        private void verify() {
            if (verified) {
                return;
            }
            verified = true;
            if (size != expected.getSize() || (int) crc.getValue() != expected.getCrc32C()) {
                throw new LogCorruptionException(String.format(
                        "snapshot file %s is corrupt: read %d bytes with crc32c %08x, its meta says %d bytes with crc32c %08x",
                        path, size, (int) crc.getValue(), expected.getSize(), expected.getCrc32C()));
            }
        }
    }
}
