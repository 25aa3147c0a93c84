package io.wheelraft.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.RaftMetaRecord;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * Term, vote and repairing flag of one group, kept as one value in the process's shared
 * {@link RocksDbStore} (key {@code wheelraft/meta/<group id>} in the {@code default} column
 * family) instead of a file of its own: hosting a group creates nothing on disk, and the term
 * and vote writes of many groups share the store's write-ahead log and its syncs. Obtain it from
 * {@link RocksDbStore#metaStorage(String)}.
 *
 * <p>Value: {@code [layout version:1][crc32c:4][RaftMetaRecord]}, the CRC32C covering the record.
 * A missing key is a fresh group (term 0); opening writes nothing.
 *
 * <p>Durability: each change is one put written with {@code sync}, whatever the store's own
 * sync option, so it is on disk before {@link #setTermAndVote} returns. A single put is atomic in
 * RocksDB. {@link #setTermAndVoteLater} (what a node uses) hands the put to the store's
 * {@link GroupCommitQueue}, which writes the puts of every group queued meanwhile in one synced
 * write: thousands of groups changing term at once cost a few syncs, and no Raft thread waits.
 *
 * <p>Damage: a value that is too short, of an unknown layout or format version, fails its
 * checksum, does not parse or names an invalid peer is refused at open with a
 * {@link LogCorruptionException} naming the group, the key and the data directory; it is never
 * read as term 0, because forgetting a vote could let the node vote twice in one term. A
 * failed write is a {@link StorageException} and leaves the term and vote in memory unchanged
 * (the node stops on it).
 *
 * <p>Threading: {@link #setTermAndVote}, {@link #setRepairing} and {@link #destroy} from one
 * thread at a time (they are synchronized with {@link #close}); the getters from any thread (one
 * immutable state through a volatile field). Heap: a few dozen bytes per group.
 */
public final class RocksDbMetaStorage implements RaftMetaStorage {

    /** Layout of the stored value (the first byte). */
    static final byte LAYOUT_VERSION = 1;
    /** Version of the {@link RaftMetaRecord} schema inside the value, as in {@link FileMetaStorage}. */
    private static final int FORMAT_VERSION = 1;
    private static final int HEADER = 1 + 4;

    /** What is durable now; replaced whole after each successful write. */
    private record State(long term, PeerId votedFor, boolean repairing) {
    }

    private static final State FRESH = new State(0, null, false);

    private static final Logger LOG = LoggerFactory.getLogger(RocksDbMetaStorage.class);

    private final RocksDbStore store;
    private final String groupId;
    private volatile State state;
    /** Whether the store holds a value for the group (read at open or written since). */
    private boolean stored;
    private boolean closed;

    private RocksDbMetaStorage(RocksDbStore store, String groupId, State state, boolean stored) {
        this.store = store;
        this.groupId = groupId;
        this.state = state;
        this.stored = stored;
    }

    /** Reads the group's value (see {@link RocksDbStore#metaStorage}). */
    static RocksDbMetaStorage open(RocksDbStore store, String groupId) {
        byte[] value;
        try {
            value = store.get(store.metaFamily(), RocksDbStore.metaKey(groupId));
        } catch (LogCorruptionException e) {
            throw new LogCorruptionException(where(store, groupId) + " cannot be read: " + e.getMessage(), e);
        }
        return value == null ? new RocksDbMetaStorage(store, groupId, FRESH, false)
                : new RocksDbMetaStorage(store, groupId, decode(store, groupId, value), true);
    }

    private static String where(RocksDbStore store, String groupId) {
        return "raft meta of group '" + groupId + "' (key '" + new String(RocksDbStore.metaKey(groupId), StandardCharsets.UTF_8)
                + "' in " + store.directory() + ")";
    }

    private static State decode(RocksDbStore store, String groupId, byte[] value) {
        if (value.length < HEADER) {
            throw damaged(store, groupId, "is " + value.length + " bytes long, shorter than its " + HEADER + "-byte header");
        }
        if (value[0] != LAYOUT_VERSION) {
            throw damaged(store, groupId, "has layout version " + value[0] + "; this build reads only version " + LAYOUT_VERSION);
        }
        int stored = ByteBuffer.wrap(value, 1, 4).getInt();
        int computed = crc(value, HEADER, value.length - HEADER);
        if (stored != computed) {
            throw damaged(store, groupId, String.format("fails its checksum (stored crc32c %08x, computed %08x)", stored, computed));
        }
        RaftMetaRecord record;
        try {
            record = RaftMetaRecord.parseFrom(ByteBuffer.wrap(value, HEADER, value.length - HEADER));
        } catch (InvalidProtocolBufferException e) {
            throw damaged(store, groupId, "does not parse: " + e.getMessage());
        }
        if (record.getFormatVersion() != FORMAT_VERSION) {
            throw damaged(store, groupId, "has format version " + record.getFormatVersion() + "; this build reads only version "
                    + FORMAT_VERSION);
        }
        PeerId votedFor = null;
        if (!record.getVotedFor().isEmpty()) {
            try {
                votedFor = PeerId.parse(record.getVotedFor());
            } catch (IllegalArgumentException e) {
                throw damaged(store, groupId, "holds an invalid vote: " + e.getMessage());
            }
        }
        return new State(record.getTerm(), votedFor, record.getRepairing());
    }

    private static LogCorruptionException damaged(RocksDbStore store, String groupId, String problem) {
        return new LogCorruptionException(where(store, groupId) + " " + problem + "; it is never read as term 0, which could let"
                + " this node vote twice in one term");
    }

    /** The stored value of {@code state}. */
    static byte[] encode(State state) {
        byte[] record = RaftMetaRecord.newBuilder()
                .setFormatVersion(FORMAT_VERSION)
                .setTerm(state.term())
                .setVotedFor(state.votedFor() == null ? "" : state.votedFor().toString())
                .setRepairing(state.repairing())
                .build()
                .toByteArray();
        ByteBuffer value = ByteBuffer.allocate(HEADER + record.length);
        value.put(LAYOUT_VERSION).putInt(crc(record, 0, record.length)).put(record);
        return value.array();
    }

    private static int crc(byte[] data, int from, int length) {
        CRC32C c = new CRC32C();
        c.update(data, from, length);
        return (int) c.getValue();
    }

    @Override
    public long term() {
        return state.term();
    }

    @Override
    public PeerId votedFor() {
        return state.votedFor();
    }

    @Override
    public boolean repairing() {
        return state.repairing();
    }

    @Override
    public void setTermAndVote(long term, PeerId votedFor) {
        if (term < 0) {
            throw new IllegalArgumentException("term must not be negative, got " + term);
        }
        write(new State(term, votedFor, state.repairing()), "term " + term + " and vote " + votedFor);
    }

    @Override
    public boolean writesLater() {
        return true;
    }

    @Override
    public void setTermAndVoteLater(long term, PeerId votedFor, Consumer<RuntimeException> done) {
        if (term < 0) {
            throw new IllegalArgumentException("term must not be negative, got " + term);
        }
        State next = new State(term, votedFor, state.repairing());
        String what = "term " + term + " and vote " + votedFor;
        GroupCommitQueue queue;
        try {
            synchronized (this) {
                checkOpen();
            }
            queue = store.groupCommitQueue();
        } catch (RuntimeException e) {
            done.accept(new StorageException("cannot persist " + what + " to the " + where(store, groupId) + ": " + e.getMessage(), e));
            return;
        }
        queue.submit(new MetaPut(RocksDbStore.metaKey(groupId), encode(next), failure -> {
            if (failure != null) {
                done.accept(new StorageException("cannot persist " + what + " to the " + where(store, groupId) + ": "
                        + failure.getMessage(), failure));
                return;
            }
            synchronized (this) {
                state = next;
                stored = true;
            }
            done.accept(null);
        }));
    }

    @Override
    public void setRepairing(boolean repairing) {
        State current = state;
        write(new State(current.term(), current.votedFor(), repairing), "repairing=" + repairing);
    }

    private synchronized void write(State next, String what) {
        checkOpen();
        try {
            store.putSynced(store.metaFamily(), RocksDbStore.metaKey(groupId), encode(next));
        } catch (RocksDBException | RuntimeException e) {
            throw new StorageException("cannot persist " + what + " to the " + where(store, groupId) + ": " + e.getMessage(), e);
        }
        state = next;
        stored = true;
    }

    /**
     * Moves the group's term, vote and repairing flag out of a {@link FileMetaStorage} directory
     * ({@code metaDir}, holding {@value FileMetaStorage#FILE_NAME}) into the store, for a group
     * that kept them in a file before: written here durably first, then the file deleted. If the
     * store already holds the group's value, a file left beside it is a copy whose deletion a
     * crash cut short, and is deleted. Costs one {@code stat} when there is no file. Call it
     * right after opening, before the node starts.
     *
     * @return true if a term and vote were taken over from the file
     * @throws LogCorruptionException if the file to take over is damaged (nothing is changed)
     * @throws StorageException       if it cannot be read, written here or deleted
     */
    public synchronized boolean takeOverFileMeta(Path metaDir) {
        checkOpen();
        Path file = metaDir.resolve(FileMetaStorage.FILE_NAME);
        if (!Files.exists(file)) {
            return false;
        }
        boolean takenOver = false;
        if (!stored) {
            FileMetaStorage.OfflineView view = FileMetaStorage.readOffline(metaDir);
            PeerId votedFor = view.votedFor().isEmpty() ? null : PeerId.parse(view.votedFor());
            write(new State(view.term(), votedFor, view.repairing()), "term " + view.term() + " taken over from " + file);
            LOG.info("raft meta of group '{}': took over term {}, vote {}{} from {} into {}; deleting the file", groupId, view.term(),
                    votedFor, view.repairing() ? " and the repairing flag" : "", file, store.directory());
            takenOver = true;
        }
        try {
            Files.deleteIfExists(file.resolveSibling(FileMetaStorage.FILE_NAME + DurableFiles.TEMP_SUFFIX));
            Files.delete(file);
            try (var left = Files.list(metaDir)) {
                if (left.findAny().isEmpty()) {
                    Files.delete(metaDir);
                }
            }
        } catch (IOException e) {
            throw new StorageException("cannot delete " + file + " after its term and vote moved to the " + where(store, groupId)
                    + ": " + e, e);
        }
        return takenOver;
    }

    /**
     * Durably deletes this group's term and vote from the store and closes this meta. Only for a
     * replica that leaves this process for good with its log and snapshots: a replica that starts
     * again without its vote could vote twice in one term.
     *
     * @throws StorageException if the delete fails (the value stays; this meta stays open)
     */
    public synchronized void destroy() {
        checkOpen();
        try {
            store.deleteSynced(store.metaFamily(), RocksDbStore.metaKey(groupId));
        } catch (RocksDBException | RuntimeException e) {
            throw new StorageException("cannot delete the " + where(store, groupId) + ": " + e.getMessage(), e);
        }
        close();
    }

    private void checkOpen() {
        if (closed) {
            throw new StorageException("the " + where(store, groupId) + " is closed");
        }
    }

    /** The group this meta belongs to. */
    public String groupId() {
        return groupId;
    }

    /** Releases the group; the shared store stays open for other groups. Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            store.release(groupId, this);
        }
    }

    @Override
    public String toString() {
        State s = state;
        return "RocksDbMetaStorage{group '" + groupId + "' in " + store.directory() + ", term=" + s.term() + ", votedFor=" + s.votedFor() + '}';
    }

    /** One group's term and vote, put synced through the store's {@link GroupCommitQueue}. */
    private record MetaPut(byte[] key, byte[] value, Consumer<RuntimeException> callback)
            implements GroupCommitQueue.Job {
        @Override
        public void fill(WriteBatch batch, RocksDbStore store) throws RocksDBException {
            batch.put(store.metaFamily(), key, value);
        }

        @Override
        public boolean forceSync() {
            return true; // a vote is never acted on before it is on disk, whatever the store's options
        }

        @Override
        public void done(RuntimeException failure) {
            callback.accept(failure);
        }

        /** The node's callback only resumes its lane: a Raft step on the callback thread may be waiting for it. */
        @Override
        public boolean doneOnWriter() {
            return true;
        }
    }
}
