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
import org.rocksdb.Status;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import static io.wheelraft.storage.RocksDbStore.bytes;
import static io.wheelraft.storage.RocksDbStore.closeAll;
import static io.wheelraft.storage.RocksDbStore.isCorruption;
import static io.wheelraft.storage.RocksDbStore.track;

/**
 * Opens a {@link RocksDbStore}: the native options (a write-ahead log's tuning, see the store's
 * class comment), the checks at open (the WAL before RocksDB replays it, the SST checksums after,
 * the format version), moving a damaged store aside and opening an empty one in its place, and
 * the read-only open for offline checks. It exists apart from the store, which serves reads and
 * writes once open, because opening is a one-time job with its own failure handling: every
 * native object made on the way is released if the open fails. Static only; thread-safe.
 */
final class RocksDbStoreOpener {

    private static final Logger LOG = LoggerFactory.getLogger(RocksDbStore.class);
    private static final String LOG_CF = "log";
    private static final String CONF_CF = "conf";
    /** Obsolete WAL files kept for reuse: one spare while a flush of the previous one is pending. */
    private static final int RECYCLED_WAL_FILES = 2;

    private RocksDbStoreOpener() {
    }

    /** See {@link RocksDbStore#open(Path, RocksDbStoreOptions)}: verifies the WAL first, and moves a store with damaged files aside. */
    static RocksDbStore open(Path dir, RocksDbStoreOptions options) {
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
            store.markDamageFoundAtOpen(damage);
        }
        return store;
    }

    /** Opens the store and verifies its SST checksums; throws {@link DamagedStoreException} on corruption. */
    private static RocksDbStore openVerified(Path absolute, RocksDbStoreOptions options) {
        boolean existed = Files.exists(absolute.resolve("CURRENT"));
        List<AutoCloseable> natives = new ArrayList<>();
        try {
            RocksDbStore.AsyncFailures failures = new RocksDbStore.AsyncFailures(absolute);
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
                    // No automatic resume after a background error: the node has already been told
                    // its store failed and stops until an operator restarts it. Left on, a resume
                    // retrying on a full disk kept close() waiting forever (see BackgroundErrorListener).
                    .setMaxBgErrorResumeCount(0)
                    // Writers that join another's write group wait for its synced write by blocking,
                    // not by spinning on sched_yield first: the wait is a disk sync (hundreds of µs or
                    // more), and with the many disk lanes of a many-group process the spinning took
                    // the cores the leaders and followers needed (writes spread over 30 groups: 10-39%
                    // more ops/s without it, four alternated pairs; one group: no difference).
                    .setEnableWriteThreadAdaptiveYield(false)
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
                    verifySstChecksums(store);
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
    private static void verifySstChecksums(RocksDbStore store) {
        long started = System.nanoTime();
        try {
            store.verifyChecksums();
        } catch (LogCorruptionException e) {
            throw new DamagedStoreException(e.getMessage());
        }
        LOG.info("Verified the checksums of the SST files of {} in {} ms", store.directory(), (System.nanoTime() - started) / 1_000_000);
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

    /** See {@link RocksDbStore#openReadOnly}. */
    static RocksDbStore openReadOnly(Path dir) {
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
                    new RocksDbStore.AsyncFailures(absolute));
            store.markReadOnly();
            return store;
        } catch (RuntimeException e) {
            closeAll(natives);
            throw e;
        }
    }

    private static ColumnFamilyOptions logColumnFamilyOptions(RocksDbStoreOptions options, LRUCache cache) {
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(cache)
                .setBlockSize(16 * 1024)
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true);
        return withInsertHints()
                .setWriteBufferSize(options.writeBufferBytes())
                .setMaxWriteBufferNumber(3)
                .setMinWriteBufferNumberToMerge(1)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setLevelCompactionDynamicLevelBytes(true)
                .setTableFormatConfig(table);
    }

    /**
     * Column family options whose memtable remembers, per group, where that group's last entry
     * went, so the next one is inserted next to it instead of searched for from the top of the
     * skip list. Every group's entries share one memtable; with writes spread over many groups
     * each insert otherwise searches a list of other groups' keys: about twice the insert cost at
     * 256 groups written at random (a memtable-only loop, 8 puts per batch). The prefix is the
     * 4-byte group tag of {@link LogKeys}. A hint costs a few hundred bytes of native memory per
     * group written since the last flush. RocksDB's Java API offers the option only through its
     * options string. (RocksDB uses hints only when one writer at a time fills the memtable, which
     * is how the store's group commit writes.)
     */
    private static ColumnFamilyOptions withInsertHints() {
        Properties hints = new Properties();
        hints.setProperty("memtable_insert_with_hint_prefix_extractor", "rocksdb.FixedPrefix." + LogKeys.GROUP_TAG_LENGTH);
        ColumnFamilyOptions parsed = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(hints);
        if (parsed == null) {
            throw new IllegalStateException("RocksDB " + RocksDB.rocksdbVersion() + " refused memtable_insert_with_hint_prefix_extractor");
        }
        return parsed;
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

    /**
     * Forwards RocksDB's background errors (flush, compaction, write callbacks) to {@link
     * RocksDbStore.AsyncFailures} and vetoes RocksDB's own recovery from them. RocksDB would
     * otherwise poll for free space after a no-space error and retry flushes; on a disk that stays
     * full, closing the store then waited for that recovery without end. A store that failed is
     * repaired by restarting the node, which opens it afresh.
     *
     * <p>RocksJava 9.7 knows only some of RocksDB's error reasons: for a flush or manifest write
     * without a WAL it throws inside its own proxy and neither method here is called. Such an
     * error fails every later write, and the store reports the first of them to its listeners.
     */
    private static final class BackgroundErrorListener extends AbstractEventListener {
        private final RocksDbStore.AsyncFailures failures;

        BackgroundErrorListener(RocksDbStore.AsyncFailures failures) {
            super(EnabledEventCallback.ON_BACKGROUND_ERROR, EnabledEventCallback.ON_ERROR_RECOVERY_BEGIN);
            this.failures = failures;
        }

        @Override
        public void onBackgroundError(BackgroundErrorReason reason, Status status) {
            failures.fail("background " + (reason == null ? "operation" : reason.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')), status);
        }

        @Override
        public boolean onErrorRecoveryBegin(BackgroundErrorReason reason, Status status) {
            return false;
        }
    }
}
