package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One RocksDB instance in one data directory, shared by every Raft group of the process: it
 * owns the native options, the directory lock, the format-version marker, and hands out one
 * {@link RocksDbLogStorage} (and, on request, one {@link RocksDbMetaStorage}) per group. Open one
 * per process and data directory, close it on shutdown (after the nodes that use it). Opening it
 * (the native options, the checks at open, the read-only open) is {@link RocksDbStoreOpener}'s job.
 *
 * <p>Layout. Column family {@code log} holds every group's entries under
 * {@code [group tag:4][index:8]} keys (see {@link LogKeys}); {@code conf} holds a second copy of
 * the configuration entries under the same keys, so a restarting node reads its membership
 * without scanning the log; {@code default} holds the store's own records: the format version,
 * the group-id to tag map, each group's first-index marker and, for groups that keep them here,
 * each group's term and vote ({@link RocksDbMetaStorage}). Groups share column families
 * (rather than one family each) so a hundred groups do not mean a hundred memtables.
 *
 * <p>Tuning (a write-ahead log, not a database): writes are synced by default (one
 * {@code fdatasync} of RocksDB's own WAL per batch; RocksDB groups concurrent writers of different
 * groups into one sync); the block cache is small and shared with index blocks charged to it, so
 * memory stays bounded however many SST files the log reaches; no compression (payloads are
 * usually small or already compressed, and the log is truncated after snapshots); no bloom
 * filters (reads go to recent entries in the memtable or walk forward); the WAL is capped so old
 * WAL files are recycled by flushing.
 *
 * <p>Damage (see docs/storage.md). Before RocksDB replays the WAL, {@link WalVerifier} reads it to
 * find records that point-in-time recovery would drop; after opening, every SST file's block
 * checksums are verified ({@link RocksDbStoreOptions#verifyOnOpen}). A store whose SST files or
 * manifest fail is moved aside whole ({@code <dir>.damaged-<UTC time>}, never deleted) and an empty
 * one opened in its place. Either kind is reported by every group's
 * {@link RocksDbLogStorage#damageFoundAtOpen()}, so the node fences itself and repairs from the
 * leader. A RocksDB background error (a failed flush or compaction, e.g. on a full disk) or a
 * failed write is reported once to every group's {@link RocksDbLogStorage#onAsyncFailure} listener.
 *
 * <p>Threading: thread-safe. Reads and writes hold a shared guard so {@link #close()} waits for
 * in-flight calls and later calls fail with {@link StorageException} instead of touching freed
 * native memory.
 */
public final class RocksDbStore implements AutoCloseable {

    /** Version of the on-disk layout described above; stored under {@link #FORMAT_KEY}. */
    public static final int FORMAT_VERSION = 1;

    private static final Logger LOG = LoggerFactory.getLogger(RocksDbStore.class);
    private static final byte[] FORMAT_KEY = bytes("wheelraft/format_version");
    private static final byte[] NEXT_TAG_KEY = bytes("wheelraft/next_group_tag");
    private static final String GROUP_KEY_PREFIX = "wheelraft/group/";
    private static final String FIRST_INDEX_KEY_PREFIX = "wheelraft/first_index/";
    private static final String META_KEY_PREFIX = "wheelraft/meta/";

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final RocksDbStoreOptions options;
    private final List<AutoCloseable> nativeObjects;
    private final RocksDB db;
    private final ColumnFamilyHandle defaultCf;
    private final ColumnFamilyHandle logCf;
    private final ColumnFamilyHandle confCf;
    private final WriteOptions writeOptions;
    /** Always synced: the store's own options when they sync, else a second set. */
    private final WriteOptions syncedWriteOptions;
    /** Never synced: for records a later synced write makes durable soon enough (see {@link #groupTag}). */
    private final WriteOptions unsyncedWriteOptions;
    private final ReadOptions readOptions;
    private final ReentrantReadWriteLock closeGuard = new ReentrantReadWriteLock();
    private final Map<String, RocksDbLogStorage> openGroups = new HashMap<>();
    private final Map<String, RocksDbMetaStorage> openMetas = new HashMap<>();
    private final AsyncFailures asyncFailures;
    /** How long {@link #close()} waits for RocksDB after a storage failure (see {@link #closeWithinBound}). */
    static final long CLOSE_AFTER_FAILURE_MS = 10_000;
    private volatile String damageFoundAtOpen;
    private volatile boolean readOnly;
    private boolean closed;
    /** Null until a group first writes its term and vote through it. */
    private GroupCommitQueue groupCommitQueue;

    RocksDbStore(Path dir, RocksDbStoreOptions options, List<AutoCloseable> nativeObjects, RocksDB db,
                 List<ColumnFamilyHandle> handles, WriteOptions writeOptions, ReadOptions readOptions,
                 AsyncFailures asyncFailures) {
        this.dir = dir;
        this.asyncFailures = asyncFailures;
        this.options = options;
        this.nativeObjects = nativeObjects;
        this.db = db;
        this.defaultCf = handles.get(0);
        this.logCf = handles.get(1);
        this.confCf = handles.get(2);
        this.writeOptions = writeOptions;
        this.syncedWriteOptions = options.sync() ? writeOptions : track(nativeObjects, new WriteOptions().setSync(true));
        this.unsyncedWriteOptions = track(nativeObjects, new WriteOptions().setSync(false));
        this.readOptions = readOptions;
    }

    /** Opens (creating if needed) the store in {@code dir} with default options. */
    public static RocksDbStore open(Path dir) {
        return open(dir, RocksDbStoreOptions.defaults());
    }

    /**
     * Opens (creating if needed) the store in {@code dir}.
     *
     * @throws StorageException if the directory is locked by another process (or already open in
     *                          this one), was written by an unknown format version, or cannot be opened
     */
    public static RocksDbStore open(Path dir, RocksDbStoreOptions options) {
        return RocksDbStoreOpener.open(dir, options);
    }

    static boolean isCorruption(RocksDBException e) {
        Status status = e.getStatus();
        if (status != null) {
            return status.getCode() == Status.Code.Corruption;
        }
        return String.valueOf(e.getMessage()).startsWith("Corruption");
    }

    /**
     * Tells every registered listener, once, of the store's first failure: a RocksDB background
     * error (reported on one of RocksDB's threads) or a failed write. Listeners may register from
     * any thread.
     */
    static final class AsyncFailures {
        private final Path dir;
        private final AtomicReference<StorageException> failure = new AtomicReference<>();
        /** A set, not a list: a process may register 100,000 groups, and each may leave again. */
        private final Set<Consumer<StorageException>> listeners = ConcurrentHashMap.newKeySet();

        AsyncFailures(Path dir) {
            this.dir = dir;
        }

        void register(Consumer<StorageException> listener) {
            listeners.add(listener);
            StorageException failed = failure.get();
            if (failed != null && listeners.remove(listener)) {
                listener.accept(failed);
            }
        }

        void unregister(Consumer<StorageException> listener) {
            listeners.remove(listener);
        }

        boolean failed() {
            return failure.get() != null;
        }

        /** Records the first failure ({@code operation}, e.g. "background flush") and tells every listener. */
        void fail(String operation, Status status) {
            String why = status == null ? "unknown error" : status.getCodeString()
                    + (status.getState() == null || status.getState().isEmpty() ? "" : ": " + status.getState());
            StorageException e = new StorageException("RocksDB " + operation + " failed in " + dir + ": " + why
                    + "; the store can no longer promise durability");
            if (!failure.compareAndSet(null, e)) {
                return;
            }
            LOG.error("{}", e.getMessage());
            for (Consumer<StorageException> listener : listeners) {
                if (listeners.remove(listener)) {
                    try {
                        listener.accept(e);
                    } catch (RuntimeException thrown) {
                        LOG.warn("A storage failure listener of {} threw: {}", dir, thrown.toString());
                    }
                }
            }
        }
    }

    /**
     * True if a running process holds {@code dir}'s RocksDB {@code LOCK} (a node is using it).
     * Another process only: locks of this process are not seen.
     */
    public static boolean isLockedByAnotherProcess(Path dir) {
        Path lock = dir.resolve("LOCK");
        if (!Files.exists(lock)) {
            return false;
        }
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(lock, java.nio.file.StandardOpenOption.WRITE);
             java.nio.channels.FileLock held = ch.tryLock()) {
            return held == null;
        } catch (java.nio.channels.OverlappingFileLockException e) {
            return false;
        } catch (IOException e) {
            throw new StorageException("cannot check the lock of " + dir + ": " + e, e);
        }
    }

    /**
     * Opens an existing store read-only, changing nothing on disk (the WAL is replayed in memory,
     * with point-in-time recovery like a normal open), for offline checks. Groups not yet in the
     * store cannot be opened; nothing can be written.
     *
     * @throws LogCorruptionException if RocksDB reports corruption while opening
     */
    public static RocksDbStore openReadOnly(Path dir) {
        return RocksDbStoreOpener.openReadOnly(dir);
    }

    /**
     * Verifies the block checksums of every SST file (an offline check).
     *
     * @return the number of SST files checked
     * @throws LogCorruptionException with RocksDB's message (which names the file and offset)
     */
    public int verifyChecksums() {
        Lock guard = enter();
        try {
            db.verifyChecksum();
            return db.getLiveFilesMetaData().size();
        } catch (RocksDBException e) {
            if (isCorruption(e)) {
                throw new LogCorruptionException("an SST file of " + dir + " fails verification: " + e.getMessage(), e);
            }
            throw new StorageException("cannot verify the SST files of " + dir + ": " + e.getMessage(), e);
        } finally {
            guard.unlock();
        }
    }

    /** The ids of every group that has a log in this store (opened at least once). */
    public List<String> groupIds() {
        return idsUnder(GROUP_KEY_PREFIX);
    }

    private List<String> idsUnder(String keyPrefix) {
        List<String> ids = new ArrayList<>();
        byte[] prefix = bytes(keyPrefix);
        withIterator(defaultCf, it -> {
            for (it.seek(prefix); it.isValid(); it.next()) {
                String key = new String(it.key(), StandardCharsets.UTF_8);
                if (!key.startsWith(keyPrefix)) {
                    break;
                }
                ids.add(key.substring(keyPrefix.length()));
            }
            return null;
        });
        return ids;
    }

    /** Writes the format version marker into a new store, or checks the one an existing store holds. */
    void checkFormatVersion() {
        byte[] stored = get(defaultCf, FORMAT_KEY);
        if (stored == null) {
            if (hasAnyKey(logCf) || hasAnyKey(confCf) || get(defaultCf, NEXT_TAG_KEY) != null) {
                throw new LogCorruptionException("data directory " + dir + " holds log data but no format version"
                        + " marker; refusing to guess its layout");
            }
            try (WriteBatch batch = new WriteBatch()) {
                batch.put(defaultCf, FORMAT_KEY, LogKeys.longBytes(FORMAT_VERSION));
                write(batch, true);
            } catch (RocksDBException e) {
                throw new StorageException("cannot write the format version marker in " + dir + ": " + e.getMessage(), e);
            }
            return;
        }
        if (stored.length != 8) {
            throw new LogCorruptionException("format version marker in " + dir + " is " + stored.length
                    + " bytes long, expected 8");
        }
        long version = LogKeys.getLong(stored, 0);
        if (version != FORMAT_VERSION) {
            throw new StorageException("data directory " + dir + " was written with storage format version " + version
                    + "; this build reads only version " + FORMAT_VERSION);
        }
    }

    private boolean hasAnyKey(ColumnFamilyHandle cf) {
        try (RocksIterator it = db.newIterator(cf)) {
            it.seekToFirst();
            return it.isValid();
        }
    }

    /**
     * The log of {@code groupId}, recovered from disk (empty for a new group). One open log per
     * group at a time; closing the log releases the group, closing the store releases all.
     *
     * @throws IllegalStateException if the group's log is already open
     * @throws LogCorruptionException if the stored log fails verification
     */
    public synchronized RocksDbLogStorage logStorage(String groupId) {
        requireGroupId(groupId);
        checkOpen();
        if (openGroups.containsKey(groupId)) {
            throw new IllegalStateException("log of group '" + groupId + "' in " + dir + " is already open");
        }
        int tag = existingGroupTag(groupId);
        RocksDbLogStorage log = tag != 0 ? RocksDbLogStorage.recover(this, groupId, tag)
                : RocksDbLogStorage.fresh(this, groupId, registerGroup(groupId));
        openGroups.put(groupId, log);
        return log;
    }

    synchronized void release(String groupId, RocksDbLogStorage log) {
        openGroups.remove(groupId, log);
    }

    /**
     * The term, vote and repairing flag of {@code groupId}, kept in this store (term 0 for a group
     * that never wrote them); see {@link RocksDbMetaStorage}. One open meta per group at a time;
     * closing it releases the group, closing the store releases all.
     *
     * @throws IllegalStateException  if the group's meta is already open
     * @throws LogCorruptionException naming the group and key if the stored value is damaged
     */
    public synchronized RocksDbMetaStorage metaStorage(String groupId) {
        requireGroupId(groupId);
        checkOpen();
        if (openMetas.containsKey(groupId)) {
            throw new IllegalStateException("raft meta of group '" + groupId + "' in " + dir + " is already open");
        }
        RocksDbMetaStorage meta = RocksDbMetaStorage.open(this, groupId);
        openMetas.put(groupId, meta);
        return meta;
    }

    /** The queue that makes many groups' appends and term and vote writes durable together, started on first use. */
    synchronized GroupCommitQueue groupCommitQueue() {
        checkOpen();
        if (groupCommitQueue == null) {
            groupCommitQueue = new GroupCommitQueue(this);
        }
        return groupCommitQueue;
    }

    synchronized void release(String groupId, RocksDbMetaStorage meta) {
        openMetas.remove(groupId, meta);
    }

    static byte[] metaKey(String groupId) {
        return bytes(META_KEY_PREFIX + groupId);
    }

    /** The ids of every group whose term and vote this store holds (for offline checks). */
    public List<String> metaGroupIds() {
        return idsUnder(META_KEY_PREFIX);
    }

    /** The tag of a group that has a log here, or 0 (tags start at 1). */
    private int existingGroupTag(String groupId) {
        byte[] stored = get(defaultCf, bytes(GROUP_KEY_PREFIX + groupId));
        if (stored == null) {
            return 0;
        }
        if (stored.length != 4) {
            throw new LogCorruptionException("tag of group '" + groupId + "' in " + dir + " is " + stored.length + " bytes, expected 4");
        }
        return LogKeys.getInt(stored, 0);
    }

    /**
     * Gives a new group the next tag. Written without a sync of its own, because nothing depends
     * on it before the group's first synced write: the write-ahead log is replayed as a prefix, so
     * any later synced write (this group's first append, or any group's) makes it durable first,
     * and if a crash loses it, no entry under the tag survived either and the tag is handed out
     * again. This keeps hosting a new group free of fsyncs.
     */
    /**
     * Registers, in one write, every group of {@code groupIds} this store does not know yet, so
     * that opening their logs afterwards ({@link #logStorage}) writes nothing. For a process that
     * creates thousands of groups at once: one registration write per group would wait behind
     * the synced writes of the groups already running (their terms, votes and appends), a WAL
     * sync each, and creating the groups would take as long as thousands of syncs. Unsynced, like
     * a single registration: a registration lost in a crash had nothing written under it.
     *
     * @return how many groups were registered (those known already are left as they are)
     * @throws IllegalArgumentException if an id is null or empty (nothing is registered then)
     */
    public synchronized int registerGroups(java.util.Collection<String> groupIds) {
        groupIds.forEach(RocksDbStore::requireGroupId);
        checkOpen();
        byte[] next = get(defaultCf, NEXT_TAG_KEY);
        int tag = next == null ? 1 : LogKeys.getInt(next, 0);
        int registered = 0;
        try (WriteBatch batch = new WriteBatch()) {
            for (String id : new java.util.LinkedHashSet<>(groupIds)) {
                if (existingGroupTag(id) != 0) {
                    continue;
                }
                byte[] tagBytes = new byte[4];
                LogKeys.putInt(tagBytes, 0, tag++);
                batch.put(defaultCf, bytes(GROUP_KEY_PREFIX + id), tagBytes);
                registered++;
            }
            if (registered == 0) {
                return 0;
            }
            byte[] nextBytes = new byte[4];
            LogKeys.putInt(nextBytes, 0, tag);
            batch.put(defaultCf, NEXT_TAG_KEY, nextBytes);
            writeUnsynced(batch);
        } catch (RocksDBException e) {
            throw new StorageException("cannot register " + groupIds.size() + " groups in " + dir + ": " + e.getMessage(), e);
        }
        return registered;
    }

    /** Registers one new group (see {@link #registerGroups}) and returns its tag. */
    private int registerGroup(String groupId) {
        registerGroups(java.util.List.of(groupId));
        return existingGroupTag(groupId);
    }

    private static void requireGroupId(String groupId) {
        if (groupId == null || groupId.isEmpty()) {
            throw new IllegalArgumentException("group id must be a non-empty string, got " + (groupId == null ? "null" : "''"));
        }
    }

    /**
     * What was found damaged and dropped when this store opened (see the class comment), one line
     * naming the file and position; null when it opened intact.
     */
    public String damageFoundAtOpen() {
        return damageFoundAtOpen;
    }

    /** True for a store from {@link #openReadOnly}. */
    boolean isReadOnly() {
        return readOnly;
    }

    /** This store was opened read-only (see {@link RocksDbStoreOpener#openReadOnly}): nothing may be written. */
    void markReadOnly() {
        readOnly = true;
    }

    /** Records what the open found damaged and dropped (see {@link #damageFoundAtOpen()}). */
    void markDamageFoundAtOpen(String damage) {
        damageFoundAtOpen = damage;
    }

    void onAsyncFailure(Consumer<StorageException> listener) {
        asyncFailures.register(listener);
    }

    void removeAsyncFailureListener(Consumer<StorageException> listener) {
        asyncFailures.unregister(listener);
    }

    /** The data directory. */
    public Path directory() {
        return dir;
    }

    public RocksDbStoreOptions options() {
        return options;
    }

    ColumnFamilyHandle logFamily() {
        return logCf;
    }

    ColumnFamilyHandle confFamily() {
        return confCf;
    }

    ColumnFamilyHandle metaFamily() {
        return defaultCf;
    }

    static byte[] firstIndexKey(int groupTag) {
        return bytes(FIRST_INDEX_KEY_PREFIX + Integer.toUnsignedString(groupTag));
    }

    /** Reads a key under the close guard; null if absent. */
    byte[] get(ColumnFamilyHandle cf, byte[] key) {
        return get(cf, key, null, 0);
    }

    /**
     * Reads log entry {@code index} of {@code groupId} under the close guard; null if absent. A
     * corrupt block becomes a {@link LogCorruptionException} naming the entry and group (RocksDB's
     * message names the file and offset). The message is built only on failure: this is the read
     * path of every entry and term lookup.
     */
    byte[] getEntry(ColumnFamilyHandle cf, byte[] key, String groupId, long index) {
        return get(cf, key, groupId, index);
    }

    private byte[] get(ColumnFamilyHandle cf, byte[] key, String groupId, long index) {
        Lock guard = enter();
        try {
            return db.get(cf, readOptions, key);
        } catch (RocksDBException e) {
            String what = groupId == null ? "read" : "read of log entry " + index + " of group '" + groupId + "'";
            if (isCorruption(e)) {
                throw new LogCorruptionException(what + " in " + dir + " hit damaged data: " + e.getMessage(), e);
            }
            throw new StorageException(what + " failed in " + dir + ": " + e.getMessage(), e);
        } finally {
            guard.unlock();
        }
    }

    /**
     * Writes a batch, synced if the store syncs (or {@code forceSync}). Synced writes of many
     * threads share one WAL sync: RocksDB lets the first writer in line write and sync the
     * batches queued behind it together.
     */
    void write(WriteBatch batch, boolean forceSync) throws RocksDBException {
        Lock guard = enter();
        try {
            db.write(forceSync ? syncedWriteOptions : writeOptions, batch);
        } catch (RocksDBException e) {
            throw writeFailed(e);
        } finally {
            guard.unlock();
        }
    }

    /** Writes a batch without waiting for a sync, whatever the store's options say. */
    private void writeUnsynced(WriteBatch batch) throws RocksDBException {
        Lock guard = enter();
        try {
            db.write(unsyncedWriteOptions, batch);
        } catch (RocksDBException e) {
            throw writeFailed(e);
        } finally {
            guard.unlock();
        }
    }

    /** Puts one key, synced whatever the store's options say (see {@link #write}). */
    void putSynced(ColumnFamilyHandle cf, byte[] key, byte[] value) throws RocksDBException {
        Lock guard = enter();
        try {
            db.put(cf, syncedWriteOptions, key, value);
        } catch (RocksDBException e) {
            throw writeFailed(e);
        } finally {
            guard.unlock();
        }
    }

    /** Deletes one key, synced whatever the store's options say. */
    void deleteSynced(ColumnFamilyHandle cf, byte[] key) throws RocksDBException {
        Lock guard = enter();
        try {
            db.delete(cf, syncedWriteOptions, key);
        } catch (RocksDBException e) {
            throw writeFailed(e);
        } finally {
            guard.unlock();
        }
    }

    /**
     * A failed write means RocksDB has stopped accepting writes for every group in the store (a
     * shared WAL), so every listener hears of it, not only the group whose write failed. This also
     * covers background errors whose notice RocksJava drops: for a flush without a WAL
     * ({@code BackgroundErrorReason} 5) its listener proxy throws before the listener runs, and the
     * first sign is the next write failing.
     */
    private RocksDBException writeFailed(RocksDBException e) {
        asyncFailures.fail("write", e.getStatus());
        return e;
    }

    /** Runs {@code body} with a fresh iterator over {@code cf}, under the close guard. */
    <T> T withIterator(ColumnFamilyHandle cf, java.util.function.Function<RocksIterator, T> body) {
        Lock guard = enter();
        try (ReadOptions scan = new ReadOptions().setFillCache(false);
             RocksIterator it = db.newIterator(cf, scan)) {
            T result = body.apply(it);
            it.status(); // an iterator stops early, without throwing, on a read error
            return result;
        } catch (RocksDBException e) {
            if (isCorruption(e)) {
                throw new LogCorruptionException("a scan of " + dir + " hit damaged data: " + e.getMessage(), e);
            }
            throw new StorageException("a scan of " + dir + " failed: " + e.getMessage(), e);
        } finally {
            guard.unlock();
        }
    }

    private Lock enter() {
        Lock guard = closeGuard.readLock();
        guard.lock();
        if (closed) {
            guard.unlock();
            throw new StorageException("the RocksDB store in " + dir + " is closed");
        }
        return guard;
    }

    private synchronized void checkOpen() {
        if (closed) {
            throw new StorageException("the RocksDB store in " + dir + " is closed");
        }
    }

    /** Closes every open group log and the RocksDB instance. Idempotent. */
    @Override
    public void close() {
        List<AutoCloseable> groups;
        GroupCommitQueue syncQueue;
        synchronized (this) {
            groups = new ArrayList<>(openGroups.values());
            groups.addAll(openMetas.values());
            syncQueue = groupCommitQueue;
        }
        if (syncQueue != null) {
            syncQueue.close(); // before the exclusive guard: its last write needs the shared one
        }
        for (AutoCloseable group : groups) {
            try {
                group.close();
            } catch (Exception e) {
                LOG.warn("Could not release {}: {}", group, e.toString());
            }
        }
        Lock exclusive = closeGuard.writeLock();
        exclusive.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (!options.sync()) {
                try {
                    db.flushWal(true);
                } catch (RocksDBException e) {
                    LOG.warn("Could not sync the WAL of {} on close: {}", dir, e.getMessage());
                }
            }
            // Stop background work first, so no flush or compaction starts while closing. Nothing
            // is lost: every write is in the WAL, and what was pending resumes at the next open.
            boolean failed = hasFailed();
            db.cancelAllBackgroundWork(false);
            logCf.close();
            confCf.close();
            defaultCf.close();
            if (failed) {
                closeWithinBound();
                return;
            }
            db.close();
            closeAll(nativeObjects);
            LOG.info("Closed RocksDB log store in {}", dir);
        } finally {
            exclusive.unlock();
        }
    }

    /** True once RocksDB has reported a background error (flush, compaction, WAL write callback). */
    private boolean hasFailed() {
        if (asyncFailures.failed()) {
            return true;
        }
        try {
            return db.getLongProperty("rocksdb.background-errors") > 0;
        } catch (RocksDBException e) {
            return true;
        }
    }

    /**
     * Closes a store that has failed, waiting at most {@link #CLOSE_AFTER_FAILURE_MS}. On a disk
     * that stays full, RocksDB's close can wait without end for a flush it retries every second;
     * a node shutting down must still exit. If the bound passes, the native store is left to the
     * process's exit (its lock stays held until then). Nothing acknowledged depends on the close:
     * each synced write was durable when it returned.
     */
    private void closeWithinBound() {
        Thread closer = new Thread(() -> {
            db.close();
            closeAll(nativeObjects);
        }, "rocksdb-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(CLOSE_AFTER_FAILURE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            LOG.error("RocksDB in {} did not close within {} ms after its storage failure; it is left open until the "
                    + "process exits. Free or replace the disk, then restart the node", dir, CLOSE_AFTER_FAILURE_MS);
        } else {
            LOG.info("Closed RocksDB log store in {} after its storage failure", dir);
        }
    }

    static <T extends AutoCloseable> T track(List<AutoCloseable> natives, T object) {
        natives.add(object);
        return object;
    }

    static void closeAll(List<AutoCloseable> natives) {
        for (int i = natives.size() - 1; i >= 0; i--) {
            try {
                natives.get(i).close();
            } catch (Exception e) {
                LOG.warn("Could not release a RocksDB native object: {}", e.toString());
            }
        }
        natives.clear();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "RocksDbStore{" + dir + '}';
    }
}
