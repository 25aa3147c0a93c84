package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Small, crash-safe files: written whole to a temporary sibling, fsynced, renamed over the
 * target, then the directory fsynced, so a reader finds either the old or the new content.
 * Each file is {@code [magic:4][length:4][crc32c:4][payload]}; reading checks all three.
 * Also the fsync helpers the snapshot storage uses. Stateless and thread-safe.
 */
final class DurableFiles {

    static final String TEMP_SUFFIX = ".tmp";
    private static final int HEADER = 12;

    private DurableFiles() {
    }

    /**
     * Atomically replaces {@code target} with a checksummed file holding {@code payload}.
     *
     * <p>A failed write or fsync is never retried on the same file: the page cache may have
     * dropped the data while a second fsync reports success ("fsyncgate"). The temporary file is
     * removed and the caller gets the error; the next call writes a brand-new temporary file.
     */
    static void writeAtomically(Path target, String magic, byte[] payload) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(HEADER + payload.length);
        buf.put(magicBytes(magic)).putInt(payload.length).putInt(crc(payload)).put(payload).flip();
        replaceAtomically(target, buf);
    }

    /**
     * Atomically replaces {@code target} with exactly the bytes remaining in {@code content}
     * (which carries its own checksums): temp file, fsync, rename, directory fsync. The same
     * never-retry-on-the-same-file rule as {@link #writeAtomically} applies.
     */
    static void replaceAtomically(Path target, ByteBuffer content) throws IOException {
        Path temp = target.resolveSibling(target.getFileName() + TEMP_SUFFIX);
        Files.deleteIfExists(temp);
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                while (content.hasRemaining()) {
                    ch.write(content);
                }
                ch.force(true);
            }
            moveAtomically(temp, target);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // the original error is what matters; a stale temp file is removed at the next open
            }
            throw e;
        }
        fsyncDirectory(target.toAbsolutePath().getParent());
    }

    /**
     * Reads and verifies a file written by {@link #writeAtomically}.
     *
     * @return the payload, or null if the file does not exist
     * @throws LogCorruptionException naming the file if it is truncated or fails its checksum
     */
    static byte[] readVerified(Path file, String magic) throws IOException {
        byte[] all;
        try {
            all = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
        return verify(file, all, magic);
    }

    /**
     * Verifies the bytes of a file written by {@link #writeAtomically}, already read whole.
     *
     * @return the payload
     * @throws LogCorruptionException naming the file if it is truncated or fails its checksum
     */
    static byte[] verify(Path file, byte[] all, String magic) {
        if (all.length < HEADER) {
            throw new LogCorruptionException("file " + file.toAbsolutePath() + " is truncated: " + all.length
                    + " bytes, shorter than its " + HEADER + "-byte header");
        }
        ByteBuffer buf = ByteBuffer.wrap(all);
        byte[] foundMagic = new byte[4];
        buf.get(foundMagic);
        if (!new String(foundMagic, StandardCharsets.ISO_8859_1).equals(magic)) {
            throw new LogCorruptionException("file " + file.toAbsolutePath() + " is not a " + magic + " file (starts with '"
                    + new String(foundMagic, StandardCharsets.ISO_8859_1) + "')");
        }
        int length = buf.getInt();
        int storedCrc = buf.getInt();
        if (length < 0 || length != all.length - HEADER) {
            throw new LogCorruptionException("file " + file.toAbsolutePath() + " is truncated or padded: header says "
                    + length + " payload bytes, file holds " + (all.length - HEADER));
        }
        byte[] payload = new byte[length];
        buf.get(payload);
        int computed = crc(payload);
        if (computed != storedCrc) {
            throw new LogCorruptionException(String.format("file %s fails its checksum (stored crc32c %08x, computed %08x)",
                    file.toAbsolutePath(), storedCrc, computed));
        }
        return payload;
    }

    static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("file system of " + to + " cannot rename atomically; durable storage needs it", e);
        }
    }

    /** Flushes a file's content and metadata to the device. */
    static void fsyncFile(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    /** Makes a directory's entries (creations, renames, deletions) durable. A no-op where unsupported. */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some platforms (Windows) cannot open a directory; on Linux this must work.
            if (System.getProperty("os.name", "").toLowerCase().contains("win")) {
                return;
            }
            throw e;
        }
    }

    static int crc(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data);
        return (int) c.getValue();
    }

    private static byte[] magicBytes(String magic) {
        byte[] b = magic.getBytes(StandardCharsets.ISO_8859_1);
        if (b.length != 4) {
            throw new IllegalArgumentException("magic must be 4 bytes: " + magic);
        }
        return b;
    }
}
