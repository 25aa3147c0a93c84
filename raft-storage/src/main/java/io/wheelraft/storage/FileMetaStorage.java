package io.wheelraft.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.RaftMetaRecord;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Term and vote in one small file ({@value #FILE_NAME}) of a node's directory: a
 * {@link RaftMetaRecord} with a CRC32C, replaced atomically by write-temp, fsync, rename, fsync
 * directory. A missing file means a fresh node (term 0); a corrupt or truncated one is reported
 * with {@link LogCorruptionException}, never read as zero, because forgetting a vote could let
 * a node vote twice in one term.
 *
 * <p>Threading: {@link #setTermAndVote} from one thread at a time; {@link #term()} and
 * {@link #votedFor()} from any thread (they read one immutable record through a volatile field).
 */
public final class FileMetaStorage implements RaftMetaStorage {

    public static final String FILE_NAME = "raft_meta";
    static final String MAGIC = "WRMT";
    private static final int FORMAT_VERSION = 1;

    private final Path file;
    private volatile RaftMetaRecord record;
    private volatile boolean closed;

    private FileMetaStorage(Path file, RaftMetaRecord record) {
        this.file = file;
        this.record = record;
    }

    /**
     * Loads the meta of the node whose directory is {@code dir} (created if missing).
     *
     * @throws LogCorruptionException if the file is corrupt, truncated, or of an unknown version
     */
    public static FileMetaStorage open(Path dir) {
        if (dir == null) {
            throw new IllegalArgumentException("meta directory is required (got null)");
        }
        Path file = dir.toAbsolutePath().normalize().resolve(FILE_NAME);
        try {
            Files.createDirectories(file.getParent());
            // A temp file left by a crash mid-write was never renamed: the write did not return.
            Files.deleteIfExists(file.resolveSibling(FILE_NAME + DurableFiles.TEMP_SUFFIX));
            byte[] payload = DurableFiles.readVerified(file, MAGIC);
            return new FileMetaStorage(file, payload == null ? fresh() : parse(file, payload));
        } catch (IOException e) {
            throw new StorageException("cannot read raft meta " + file + ": " + e, e);
        }
    }

    /** Term, vote and repairing flag as read by {@link #readOffline}. */
    public record OfflineView(Path file, long term, String votedFor, boolean repairing) {
    }

    /**
     * Reads and verifies the meta in {@code dir} without creating or removing anything (for the
     * offline {@code verify} command).
     *
     * @return null if there is no meta file
     * @throws LogCorruptionException if it is corrupt, truncated, or of an unknown version
     */
    public static OfflineView readOffline(Path dir) {
        Path file = dir.toAbsolutePath().normalize().resolve(FILE_NAME);
        try {
            byte[] payload = DurableFiles.readVerified(file, MAGIC);
            if (payload == null) {
                return null;
            }
            RaftMetaRecord r = parse(file, payload);
            return new OfflineView(file, r.getTerm(), r.getVotedFor(), r.getRepairing());
        } catch (IOException e) {
            throw new StorageException("cannot read raft meta " + file + ": " + e, e);
        }
    }

    private static RaftMetaRecord fresh() {
        return RaftMetaRecord.newBuilder().setFormatVersion(FORMAT_VERSION).build();
    }

    private static RaftMetaRecord parse(Path file, byte[] payload) {
        RaftMetaRecord parsed;
        try {
            parsed = RaftMetaRecord.parseFrom(payload);
        } catch (InvalidProtocolBufferException e) {
            throw new LogCorruptionException("raft meta " + file + " does not parse: " + e.getMessage(), e);
        }
        if (parsed.getFormatVersion() != FORMAT_VERSION) {
            throw new LogCorruptionException("raft meta " + file + " has format version " + parsed.getFormatVersion()
                    + "; this build reads only version " + FORMAT_VERSION);
        }
        if (!parsed.getVotedFor().isEmpty()) {
            try {
                PeerId.parse(parsed.getVotedFor());
            } catch (IllegalArgumentException e) {
                throw new LogCorruptionException("raft meta " + file + " holds an invalid vote: " + e.getMessage(), e);
            }
        }
        return parsed;
    }

    @Override
    public long term() {
        return record.getTerm();
    }

    @Override
    public PeerId votedFor() {
        String v = record.getVotedFor();
        return v.isEmpty() ? null : PeerId.parse(v);
    }

    @Override
    public void setTermAndVote(long term, PeerId votedFor) {
        if (term < 0) {
            throw new IllegalArgumentException("term must not be negative, got " + term);
        }
        RaftMetaRecord next = record.toBuilder()
                .setFormatVersion(FORMAT_VERSION)
                .setTerm(term)
                .setVotedFor(votedFor == null ? "" : votedFor.toString())
                .build();
        write(next, "term " + term + " and vote " + votedFor);
    }

    @Override
    public boolean repairing() {
        return record.getRepairing();
    }

    @Override
    public void setRepairing(boolean repairing) {
        write(record.toBuilder().setRepairing(repairing).build(), "repairing=" + repairing);
    }

    private void write(RaftMetaRecord next, String what) {
        if (closed) {
            throw new StorageException("raft meta " + file + " is closed");
        }
        try {
            DurableFiles.writeAtomically(file, MAGIC, next.toByteArray());
        } catch (IOException e) {
            throw new StorageException("cannot persist " + what + " to " + file + ": " + e, e);
        }
        record = next;
    }

    /** The file holding the meta. */
    public Path file() {
        return file;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "FileMetaStorage{" + file + ", term=" + term() + ", votedFor=" + record.getVotedFor() + '}';
    }
}
