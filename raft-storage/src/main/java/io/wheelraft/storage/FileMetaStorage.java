package io.wheelraft.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.RaftMetaRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Term and vote in one small file ({@value #FILE_NAME}) of a node's directory, written with a
 * single data-only sync so that a vote costs one device write, not several journal commits.
 *
 * <p>The file is preallocated at {@value MetaSlots#FILE_SIZE} bytes and holds two slots (A and B,
 * one 4 KiB page each; layout in {@link MetaSlots}). Each slot carries a magic, a layout version,
 * a sequence number, the {@link RaftMetaRecord} (length-prefixed) and a CRC32C over the slot. A
 * change is written to the slot that does <em>not</em> hold the newest valid record, then
 * {@link FileChannel#force force(false)} ({@code fdatasync}) makes it durable. The file's size
 * never changes after it is created, so no file-system metadata has to reach the journal: one
 * data write and a device cache flush. Reading takes the valid slot with the highest sequence.
 *
 * <p>Why a torn slot may be skipped: a write only ever touches the slot that is not the newest,
 * so the newest record stays intact on disk while it is replaced. If a crash tears the new slot,
 * the write never returned, so the caller never used the new term or vote (a term or vote is used
 * only after {@link #setTermAndVote} returns); the other slot holds the previous value, which was
 * durable before the new write started. Reading that previous value is exactly the state the
 * node last relied on. If <em>neither</em> slot is valid, the file is reported with
 * {@link LogCorruptionException} naming it and each slot's problem, and is never read as term 0,
 * because forgetting a vote could let a node vote twice in one term.
 *
 * <p>The file is created at the first write, whole (the record in slot A, slot B all zeros), by
 * write-temp, fsync, rename, fsync directory, so its existence and size are durable before any
 * slot is overwritten in place. A missing file means a fresh node (term 0). A file in the earlier
 * layout (version 1: {@code [magic "WRMT"][length][crc32c][record]}, replaced whole at every write)
 * is read at {@link #open} and converted once, by the same temp-and-rename path.
 *
 * <p>Failures: an {@link IOException} from a write or its sync is a {@link StorageException} and
 * the in-memory state is left unchanged (the node stops on it). The channel is closed and the next
 * write opens a new one and rewrites the whole target slot, so nothing of the failed attempt is
 * relied on.
 *
 * <p>Threading: {@link #setTermAndVote} and {@link #setRepairing} from one thread at a time
 * (they are also synchronized with {@link #close}); {@link #term()} and {@link #votedFor()} from
 * any thread (they read one immutable record through a volatile field).
 */
public final class FileMetaStorage implements RaftMetaStorage {

    private static final Logger LOG = LoggerFactory.getLogger(FileMetaStorage.class);

    public static final String FILE_NAME = "raft_meta";
    /** Magic of the version-1 layout (one whole-file record), still read and converted. */
    static final String MAGIC = "WRMT";
    /** Version of the {@link RaftMetaRecord} schema inside either layout. */
    private static final int FORMAT_VERSION = 1;

    private final Path file;
    private volatile RaftMetaRecord record;
    private volatile boolean closed;
    /** Open on the two-slot file once it exists; null before the first write or after a failed one. */
    private FileChannel channel;
    /** Slot holding the newest valid record, and its sequence; meaningful once the file exists. */
    private int newestSlot;
    private long sequence;
    private boolean fileExists;

    private FileMetaStorage(Path file, RaftMetaRecord record) {
        this.file = file;
        this.record = record;
    }

    /**
     * Loads the meta of the node whose directory is {@code dir} (created if missing), converting
     * a version-1 file to the two-slot layout.
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
            Loaded loaded = load(file);
            if (loaded == null) {
                return new FileMetaStorage(file, fresh());
            }
            FileMetaStorage meta = new FileMetaStorage(file, loaded.record());
            if (loaded.slot() == null) {
                DurableFiles.replaceAtomically(file, MetaSlots.newFile(payload(file, loaded.record())));
                LOG.info("converted raft meta {} from layout version 1 to the two-slot layout version {} (term {})",
                        file, MetaSlots.LAYOUT_VERSION, loaded.record().getTerm());
                meta.adoptFile(0, 1);
            } else {
                meta.adoptFile(loaded.slot().index(), loaded.slot().sequence());
            }
            return meta;
        } catch (IOException e) {
            throw new StorageException("cannot read raft meta " + file + ": " + e, e);
        }
    }

    /** Takes over the existing two-slot file (synchronized like {@link #write}, so a writer thread sees it). */
    private synchronized void adoptFile(int newestSlot, long sequence) throws IOException {
        this.newestSlot = newestSlot;
        this.sequence = sequence;
        this.fileExists = true;
        this.channel = openChannel(file);
    }

    /** A record read from disk; {@code slot} is null for a version-1 file. */
    private record Loaded(RaftMetaRecord record, MetaSlots.Slot slot) {
    }

    /** Reads and verifies either layout; null if there is no file. */
    private static Loaded load(Path file) throws IOException {
        byte[] all;
        try {
            all = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (all.length == MetaSlots.FILE_SIZE) {
            MetaSlots.Slot slot = MetaSlots.newest(file, all);
            String other = MetaSlots.problemOfOther(file, all, slot.index());
            if (other != null) {
                // a write cut short by a crash leaves exactly this, and the older record is then
                // the durable one; damage looks the same, so it is reported either way, not skipped
                LOG.warn("raft meta {}: {} unusable, {}; using {} (sequence {}), the newest valid record", file,
                        MetaSlots.name(1 - slot.index()), other, MetaSlots.name(slot.index()), slot.sequence());
            }
            return new Loaded(parse(file, slot.payload()), slot);
        }
        if (MetaSlots.startsWithMagic(all) || all.length == 0) {
            throw new LogCorruptionException("raft meta " + file + " is truncated or padded: " + all.length
                    + " bytes, a two-slot meta file has exactly " + MetaSlots.FILE_SIZE);
        }
        // Anything else must be the version-1 layout; DurableFiles names what is wrong with it.
        return new Loaded(parse(file, DurableFiles.verify(file, all, MAGIC)), null);
    }

    /** Term, vote and repairing flag as read by {@link #readOffline}. */
    public record OfflineView(Path file, long term, String votedFor, boolean repairing) {
    }

    /**
     * Reads and verifies the meta in {@code dir}, in either layout, without creating, converting
     * or removing anything (for the offline {@code verify} command).
     *
     * @return null if there is no meta file
     * @throws LogCorruptionException if it is corrupt, truncated, or of an unknown version
     */
    public static OfflineView readOffline(Path dir) {
        Path file = dir.toAbsolutePath().normalize().resolve(FILE_NAME);
        try {
            Loaded loaded = load(file);
            if (loaded == null) {
                return null;
            }
            RaftMetaRecord r = loaded.record();
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

    private synchronized void write(RaftMetaRecord next, String what) {
        if (closed) {
            throw new StorageException("raft meta " + file + " is closed");
        }
        byte[] payload = payload(file, next);
        try {
            if (!fileExists) {
                DurableFiles.replaceAtomically(file, MetaSlots.newFile(payload));
                fileExists = true;
                newestSlot = 0;
                sequence = 1;
            } else {
                int target = 1 - newestSlot;
                if (channel == null) {
                    channel = openChannel(file);
                }
                ByteBuffer slot = MetaSlots.encode(sequence + 1, payload);
                long position = MetaSlots.offset(target);
                while (slot.hasRemaining()) {
                    position += channel.write(slot, position);
                }
                channel.force(false); // fdatasync: the size never changes, so no metadata is needed
                newestSlot = target;
                sequence++;
            }
        } catch (IOException e) {
            closeChannelQuietly();
            throw new StorageException("cannot persist " + what + " to " + file + ": " + e, e);
        }
        record = next;
    }

    /** The record's bytes, refused with one clear line if they could not fit in a slot. */
    private static byte[] payload(Path file, RaftMetaRecord next) {
        byte[] payload = next.toByteArray();
        if (payload.length > MetaSlots.MAX_PAYLOAD) {
            throw new StorageException("cannot persist term " + next.getTerm() + " to " + file + ": the record is "
                    + payload.length + " bytes, more than a meta slot holds (" + MetaSlots.MAX_PAYLOAD
                    + "); the vote names a peer id of " + next.getVotedFor().length() + " characters, use a shorter one");
        }
        return payload;
    }

    private static FileChannel openChannel(Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    private void closeChannelQuietly() {
        FileChannel ch = channel;
        channel = null;
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // the write's own error is the one reported
            }
        }
    }

    /** The file holding the meta. */
    public Path file() {
        return file;
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeChannelQuietly();
    }

    @Override
    public String toString() {
        return "FileMetaStorage{" + file + ", term=" + term() + ", votedFor=" + record.getVotedFor() + '}';
    }
}
