package io.wheelraft.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * File-level helpers of the snapshot storage: name validation, the meta file, checksumming and
 * recursive deletion. Stateless and thread-safe.
 */
final class SnapshotFiles {

    /** Name of the meta file inside each snapshot directory; not usable as a snapshot file name. */
    static final String META_FILE = "__snapshot_meta";
    /** Magic of the meta file; the trailing digit is the meta format version. */
    static final String META_MAGIC = "WRS1";

    private SnapshotFiles() {
    }

    /**
     * Checks a snapshot file name: relative, '/'-separated, no empty, "." or ".." segments, not the
     * meta file. Returns the path it resolves to inside {@code dir}.
     */
    static Path resolve(Path dir, String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("snapshot file name must not be empty");
        }
        if (name.startsWith("/") || name.contains("\\") || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("snapshot file name '" + name + "' must be relative and '/'-separated");
        }
        for (String segment : name.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("snapshot file name '" + name + "' has an empty, '.' or '..' segment");
            }
        }
        if (name.equals(META_FILE)) {
            throw new IllegalArgumentException("snapshot file name '" + name + "' is reserved for the snapshot meta");
        }
        Path resolved = dir.resolve(name).normalize();
        if (!resolved.startsWith(dir)) {
            throw new IllegalArgumentException("snapshot file name '" + name + "' escapes the snapshot directory");
        }
        return resolved;
    }

    static void writeMeta(Path snapshotDir, SnapshotMeta meta) throws IOException {
        DurableFiles.writeAtomically(snapshotDir.resolve(META_FILE), META_MAGIC, meta.toByteArray());
    }

    /**
     * Reads and verifies the meta of a snapshot directory.
     *
     * @throws LogCorruptionException if it is missing, truncated, fails its checksum or does not parse
     */
    static SnapshotMeta readMeta(Path snapshotDir) throws IOException {
        Path file = snapshotDir.resolve(META_FILE);
        byte[] payload = DurableFiles.readVerified(file, META_MAGIC);
        if (payload == null) {
            throw new LogCorruptionException("snapshot " + snapshotDir + " has no meta file " + META_FILE);
        }
        try {
            return SnapshotMeta.parseFrom(payload);
        } catch (InvalidProtocolBufferException e) {
            throw new LogCorruptionException("snapshot meta " + file + " does not parse: " + e.getMessage(), e);
        }
    }

    /** Checks that every file of {@code meta} exists in {@code dir} with its recorded size. */
    static void checkFilesPresent(Path dir, SnapshotMeta meta) throws IOException {
        for (SnapshotFile f : meta.getFilesList()) {
            Path p = resolve(dir, f.getName());
            long size;
            try {
                size = Files.size(p);
            } catch (NoSuchFileException e) {
                throw new LogCorruptionException("snapshot file " + p + " is missing (listed in the meta of " + dir + ")");
            }
            if (size != f.getSize()) {
                throw new LogCorruptionException("snapshot file " + p + " is " + size + " bytes, its meta says " + f.getSize());
            }
        }
    }

    /** Size and CRC32C of a file, read from disk. */
    static SnapshotFile describe(String name, Path file) throws IOException {
        CRC32C crc = new CRC32C();
        long size = 0;
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                crc.update(buf, 0, n);
                size += n;
            }
        }
        return SnapshotFile.newBuilder().setName(name).setSize(size).setCrc32C((int) crc.getValue()).build();
    }

    /** Deletes a directory tree; missing is fine. */
    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Fsyncs every regular file under {@code dir} and every directory, deepest first. */
    static void fsyncTree(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isDirectory(p)) {
                    DurableFiles.fsyncDirectory(p);
                } else {
                    DurableFiles.fsyncFile(p);
                }
            }
        }
    }
}
