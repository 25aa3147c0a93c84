package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.rocksdb.AbstractEventListener;
import org.rocksdb.BackgroundErrorReason;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
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
import java.nio.file.StandardCopyOption;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
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
 * per process and data directory, close it on shutdown (after the nodes that use it).
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
 * leader. A RocksDB background error (a failed flush or compaction, e.g. on a full disk) is
 * reported once to every group's {@link RocksDbLogStorage#onAsyncFailure} listener.
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
    private static final String LOG_CF = "log";
    private static final String CONF_CF = "conf";
    /** Obsolete WAL files kept for reuse: one spare while a flush of the previous one is pending. */
    private static final int RECYCLED_WAL_FILES = 2;

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
    private volatile String damageFoundAtOpen;
    private volatile boolean readOnly;
    private boolean closed;

    private RocksDbStore(Path dir, RocksDbStoreOptions options, List<AutoCloseable> nativeObjects, RocksDB db,
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
        if (dir == null || options == null) {
            throw new IllegalArgumentException("data directory and options are required (got dir=" + dir + ", options=" + options + ")");
        }
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(absolute);
        } catch (IOException e) {
            throw new StorageException("cannot create data directory " + absolute + ": " + e, e);
        }
        String damage = null;
        if (Files.exists(absolute.resolve("CURRENT"))) {
            WalVerifier.Damage wal = WalVerifier.verifyDirectory(absolute);
            if (wal != null) {
                damage = wal.describe() + "; opened with the records before it";
            }
        }
        RocksDbStore store;
        try {
            store = openVerified(absolute, options);
        } catch (DamagedStoreException e) {
            Path aside = moveAside(absolute);
            String line = e.getMessage() + "; moved the store aside to " + aside + " and opened an empty one";
            damage = damage == null ? line : damage + "; then " + line;
            store = openVerified(absolute, options);
        }
        if (damage != null) {
            LOG.error("Storage damage found at open of {}: {}", absolute, damage);
            store.damageFoundAtOpen = damage;
        }
        return store;
    }

    /** Opens the store and verifies its SST checksums; throws {@link DamagedStoreException} on corruption. */
    private static RocksDbStore openVerified(Path absolute, RocksDbStoreOptions options) {
        boolean existed = Files.exists(absolute.resolve("CURRENT"));
        List<AutoCloseable> natives = new ArrayList<>();
        try {
            AsyncFailures failures = new AsyncFailures(absolute);
            BackgroundErrorListener listener = track(natives, new BackgroundErrorListener(failures));
            LRUCache cache = track(natives, new LRUCache(options.blockCacheBytes()));
            ColumnFamilyOptions logOptions = track(natives, logColumnFamilyOptions(options, cache));
            ColumnFamilyOptions smallOptions = track(natives, new ColumnFamilyOptions()
                    .setWriteBufferSize(4L << 20)
                    .setCompressionType(CompressionType.NO_COMPRESSION));
            DBOptions dbOptions = track(natives, new DBOptions()
                    .setCreateIfMissing(true)
                    .setCreateMissingColumnFamilies(true)
                    .setMaxTotalWalSize(options.maxTotalWalBytes())
                    .setMaxBackgroundJobs(2)
                    .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                    .setKeepLogFileNum(2)
                    .setRecycleLogFileNum(options.presizedWalBytes() > 0 ? RECYCLED_WAL_FILES : 0)
                    .setListeners(List.of(listener))
                    .setStatsDumpPeriodSec(0));
            List<ColumnFamilyDescriptor> descriptors = List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, smallOptions),
                    new ColumnFamilyDescriptor(bytes(LOG_CF), logOptions),
                    new ColumnFamilyDescriptor(bytes(CONF_CF), smallOptions));
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            RocksDB db = openDb(absolute, dbOptions, descriptors, handles);
            WriteOptions writeOptions = track(natives, new WriteOptions().setSync(options.sync()));
            ReadOptions readOptions = track(natives, new ReadOptions());
            RocksDbStore store = new RocksDbStore(absolute, options, natives, db, handles, writeOptions, readOptions, failures);
            try {
                if (existed && options.verifyOnOpen()) {
                    store.verifySstChecksums();
                }
                store.checkFormatVersion();
                if (options.presizedWalBytes() > 0) {
                    long started = System.nanoTime();
                    boolean presized = WalPresizer.presize(db, absolute, handles, options.presizedWalBytes());
                    LOG.info("Pre-sized the write-ahead log of {} to {} bytes in {} ms{}", absolute, options.presizedWalBytes(),
                            (System.nanoTime() - started) / 1_000_000, presized ? "" : " (not recycled yet: appends grow it until it rotates)");
                }
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
            LOG.info("Opened RocksDB log store in {} ({})", absolute, options);
            return store;
        } catch (RuntimeException e) {
            closeAll(natives);
            throw e;
        }
    }

    /**
     * Reads every block of every SST file and checks its checksum. Costs one sequential read of the
     * store's SST files at open (see docs/storage.md for a measurement).
     */
    private void verifySstChecksums() {
        long started = System.nanoTime();
        try {
            verifyChecksums();
        } catch (LogCorruptionException e) {
            throw new DamagedStoreException(e.getMessage());
        }
        LOG.info("Verified the checksums of the SST files of {} in {} ms", dir, (System.nanoTime() - started) / 1_000_000);
    }

    static boolean isCorruption(RocksDBException e) {
        Status status = e.getStatus();
        if (status != null) {
            return status.getCode() == Status.Code.Corruption;
        }
        return String.valueOf(e.getMessage()).startsWith("Corruption");
    }

    /** Renames a damaged store directory to {@code <dir>.damaged-<UTC time>}; it is evidence and is never deleted. */
    private static Path moveAside(Path dir) {
        String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'"));
        Path aside = dir.resolveSibling(dir.getFileName() + ".damaged-" + stamp);
        try {
            Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
            DurableFiles.fsyncDirectory(dir.toAbsolutePath().getParent());
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StorageException("cannot move the damaged store " + dir + " aside to " + aside + ": " + e, e);
        }
        return aside;
    }

    /** The store's files failed verification at open: it is moved aside and replaced by an empty one. */
    private static final class DamagedStoreException extends RuntimeException {
        DamagedStoreException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Tells every registered listener, once, of the first RocksDB background error. RocksDB calls
     * {@link #fail} on one of its background threads; listeners may register from any thread.
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

        void fail(String operation, Status status) {
            String why = status == null ? "unknown error" : status.getCodeString()
                    + (status.getState() == null || status.getState().isEmpty() ? "" : ": " + status.getState());
            StorageException e = new StorageException("RocksDB background " + operation + " failed in " + dir + ": " + why
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

    /** Forwards RocksDB's background errors (flush, compaction, write callbacks) to {@link AsyncFailures}. */
    private static final class BackgroundErrorListener extends AbstractEventListener {
        private final AsyncFailures failures;

        BackgroundErrorListener(AsyncFailures failures) {
            super(EnabledEventCallback.ON_BACKGROUND_ERROR);
            this.failures = failures;
        }

        @Override
        public void onBackgroundError(BackgroundErrorReason reason, Status status) {
            failures.fail(reason == null ? "operation" : reason.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '), status);
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
        Path absolute = dir.toAbsolutePath().normalize();
        List<AutoCloseable> natives = new ArrayList<>();
        try {
            ColumnFamilyOptions cfOptions = track(natives, new ColumnFamilyOptions());
            DBOptions dbOptions = track(natives, new DBOptions().setInfoLogLevel(InfoLogLevel.ERROR_LEVEL));
            List<ColumnFamilyDescriptor> descriptors = List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions),
                    new ColumnFamilyDescriptor(bytes(LOG_CF), cfOptions),
                    new ColumnFamilyDescriptor(bytes(CONF_CF), cfOptions));
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            RocksDB db;
            try {
                db = RocksDB.openReadOnly(dbOptions, absolute.toString(), descriptors, handles);
            } catch (RocksDBException e) {
                if (isCorruption(e)) {
                    throw new LogCorruptionException("RocksDB cannot open " + absolute + ": " + e.getMessage(), e);
                }
                throw new StorageException("cannot open RocksDB in " + absolute + " read-only: " + e.getMessage(), e);
            }
            WriteOptions writeOptions = track(natives, new WriteOptions());
            ReadOptions readOptions = track(natives, new ReadOptions());
            RocksDbStore store = new RocksDbStore(absolute, RocksDbStoreOptions.defaults(), natives, db, handles, writeOptions, readOptions,
                    new AsyncFailures(absolute));
            store.readOnly = true;
            return store;
        } catch (RuntimeException e) {
            closeAll(natives);
            throw e;
        }
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

    private static ColumnFamilyOptions logColumnFamilyOptions(RocksDbStoreOptions options, LRUCache cache) {
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(cache)
                .setBlockSize(16 * 1024)
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true);
        return new ColumnFamilyOptions()
                .setWriteBufferSize(options.writeBufferBytes())
                .setMaxWriteBufferNumber(3)
                .setMinWriteBufferNumberToMerge(1)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setLevelCompactionDynamicLevelBytes(true)
                .setTableFormatConfig(table);
    }

    private static RocksDB openDb(Path dir, DBOptions dbOptions, List<ColumnFamilyDescriptor> descriptors,
                                  List<ColumnFamilyHandle> handles) {
        try {
            return RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
        } catch (RocksDBException e) {
            throw openFailure(dir, e);
        }
    }

    /**
     * What a failed open means. Corruption is checked first: RocksDB's corruption messages name
     * blocks ("block checksum mismatch"), which a test for the word "lock" would take for a held
     * LOCK file and report a damaged store as one in use.
     */
    static RuntimeException openFailure(Path dir, RocksDBException e) {
        String message = String.valueOf(e.getMessage());
        if (isCorruption(e)) {
            return new DamagedStoreException("RocksDB cannot open " + dir + ": " + message);
        }
        if (message.contains("/LOCK") || message.contains("lock file")) {
            return new StorageException("data directory " + dir + " is already in use (its LOCK is held by another"
                    + " process, or this process opened it already): " + message, e);
        }
        return new StorageException("cannot open RocksDB in " + dir + ": " + message, e);
    }

    private void checkFormatVersion() {
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
        } finally {
            guard.unlock();
        }
    }

    /** Writes a batch without waiting for a sync, whatever the store's options say. */
    private void writeUnsynced(WriteBatch batch) throws RocksDBException {
        Lock guard = enter();
        try {
            db.write(unsyncedWriteOptions, batch);
        } finally {
            guard.unlock();
        }
    }

    /** Puts one key, synced whatever the store's options say (see {@link #write}). */
    void putSynced(ColumnFamilyHandle cf, byte[] key, byte[] value) throws RocksDBException {
        Lock guard = enter();
        try {
            db.put(cf, syncedWriteOptions, key, value);
        } finally {
            guard.unlock();
        }
    }

    /** Deletes one key, synced whatever the store's options say. */
    void deleteSynced(ColumnFamilyHandle cf, byte[] key) throws RocksDBException {
        Lock guard = enter();
        try {
            db.delete(cf, syncedWriteOptions, key);
        } finally {
            guard.unlock();
        }
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
        synchronized (this) {
            groups = new ArrayList<>(openGroups.values());
            groups.addAll(openMetas.values());
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
            logCf.close();
            confCf.close();
            defaultCf.close();
            db.close();
            closeAll(nativeObjects);
            LOG.info("Closed RocksDB log store in {}", dir);
        } finally {
            exclusive.unlock();
        }
    }

    private static <T extends AutoCloseable> T track(List<AutoCloseable> natives, T object) {
        natives.add(object);
        return object;
    }

    private static void closeAll(List<AutoCloseable> natives) {
        for (int i = natives.size() - 1; i >= 0; i--) {
            try {
                natives.get(i).close();
            } catch (Exception e) {
                LOG.warn("Could not release a RocksDB native object: {}", e.toString());
            }
        }
        natives.clear();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "RocksDbStore{" + dir + '}';
    }
}
