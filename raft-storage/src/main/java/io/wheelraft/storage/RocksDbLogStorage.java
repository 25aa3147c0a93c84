package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The Raft log of one group, kept in a shared {@link RocksDbStore} under the group's key prefix.
 * Obtain it from {@link RocksDbStore#logStorage(String)}.
 *
 * <p>Durability: an append is one {@code WriteBatch} (entries, plus copies of configuration
 * entries in the {@code conf} family) written with one sync, so a batch is all there or not at
 * all after a crash. Prefix truncation is a range delete plus a persisted first-index marker in
 * the same batch: O(1) to issue, and visible after a restart even before compaction drops the
 * data. Every value carries a CRC32C ({@link EntryCodec}) checked on each read.
 *
 * <p>Threading: mutating methods are called by one thread at a time (the node); reads may run
 * concurrently from any thread. The log's bounds live in one immutable {@link Bounds} published
 * through a volatile field: appends publish after the write, truncations before the delete, so
 * a reader never sees an index inside the bounds whose value is missing unless the data really is.
 */
public final class RocksDbLogStorage implements LogStorage {

    /** First and last index held; {@code last == first - 1} when empty. */
    private record Bounds(long first, long last) {
        boolean contains(long index) {
            return index >= first && index <= last;
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(RocksDbLogStorage.class);

    private final RocksDbStore store;
    private final AtomicBoolean readDamageLogged = new AtomicBoolean();
    private volatile Consumer<StorageException> asyncListener;
    /** What this log registered with the store (once), so closing can take it back; guarded by {@code this}. */
    private Consumer<StorageException> registeredWithStore;
    private final String groupId;
    private final int tag;
    private final String where;
    private volatile Bounds bounds;
    private volatile boolean closed;
    /** What recovery found damaged in this group's own entries and cut off; null if nothing. */
    private volatile String damage;

    private RocksDbLogStorage(RocksDbStore store, String groupId, int tag, Bounds bounds) {
        this.store = store;
        this.groupId = groupId;
        this.tag = tag;
        this.where = describe(store, groupId);
        this.bounds = bounds;
    }

    private static String describe(RocksDbStore store, String groupId) {
        return "group '" + groupId + "' in data directory " + store.directory();
    }

    /** The empty log of a group whose tag was just registered: nothing can be stored under it yet. */
    static RocksDbLogStorage fresh(RocksDbStore store, String groupId, int tag) {
        return new RocksDbLogStorage(store, groupId, tag, new Bounds(1, 0));
    }

    /**
     * Reads the group's bounds from disk and verifies them (see {@link RocksDbStoreOptions#verifyOnOpen}):
     * the first stored entry must sit at the first-index marker, the indexes must be contiguous and
     * the last entry must pass its checksum. A log that fails is cut back to its last verified
     * entry (or emptied, when its head is wrong) and the damage reported by
     * {@link #damageFoundAtOpen()}, so the node fences itself and takes the rest from the leader.
     * A read-only store cannot cut: it throws {@link LogCorruptionException} instead.
     */
    static RocksDbLogStorage recover(RocksDbStore store, String groupId, int tag) {
        String where = describe(store, groupId);
        byte[] marker = store.get(store.metaFamily(), RocksDbStore.firstIndexKey(tag));
        if (marker != null && marker.length != 8) {
            throw new LogCorruptionException("first-index marker of " + where + " is " + marker.length + " bytes, expected 8");
        }
        long first = marker == null ? 1 : LogKeys.getLong(marker, 0);
        long[] ends = store.withIterator(store.logFamily(), it -> storedEnds(it, tag));
        if (ends == null) {
            return new RocksDbLogStorage(store, groupId, tag, new Bounds(first, first - 1));
        }
        Bounds stored = new Bounds(first, ends[1]);
        RocksDbLogStorage log = new RocksDbLogStorage(store, groupId, tag, stored);
        if (ends[0] != first) {
            String problem = "log of " + where + " should start at index " + first + " but its first stored entry is " + ends[0]
                    + (ends[0] > first ? " (entries are missing)" : "");
            log.cutBack(first - 1, problem, "dropped its stored entries " + ends[0] + ".." + ends[1]);
            return log;
        }
        if (store.options().verifyOnOpen()) {
            Unverified bad = store.withIterator(store.logFamily(), it -> firstUnverified(it, tag, stored, where));
            if (bad != null) {
                log.cutBack(bad.index() - 1, bad.problem(), bad.index() - 1 < first ? "emptied the log"
                        : "kept entries " + first + ".." + (bad.index() - 1));
            }
        }
        long lastGood = log.bounds.last;
        LogCorruptionException corrupt = null;
        while (lastGood >= first) {
            try {
                log.entry(lastGood); // proves the newest entry decodes and its checksum holds
                break;
            } catch (LogCorruptionException e) {
                if (corrupt == null) {
                    corrupt = e;
                }
                lastGood--;
            }
        }
        if (corrupt != null) {
            log.cutBack(lastGood, corrupt.getMessage(), lastGood < first ? "emptied the log" : "kept entries " + first + ".." + lastGood);
        }
        return log;
    }

    /**
     * Cuts the recovered log back to {@code lastKept} (dropping what failed verification) and
     * records the damage; a read-only store throws instead.
     */
    private void cutBack(long lastKept, String problem, String action) {
        if (store.isReadOnly()) {
            throw new LogCorruptionException(problem);
        }
        Bounds current = bounds;
        if (lastKept < current.first) {
            reset(current.first);
        } else {
            truncateSuffix(lastKept);
        }
        String line = problem + "; " + action;
        damage = damage == null ? line : damage + "; " + line;
        LOG.error("Log damage found at open: {}", line);
    }

    private static long[] storedEnds(RocksIterator it, int tag) {
        it.seek(LogKeys.groupStart(tag));
        if (!it.isValid() || !LogKeys.belongsTo(it.key(), tag)) {
            return null;
        }
        long firstStored = LogKeys.index(it.key());
        it.seekForPrev(LogKeys.groupEnd(tag));
        long lastStored = LogKeys.index(it.key());
        return new long[] {firstStored, lastStored};
    }

    /** The first entry that fails verification at open: its index and why. */
    private record Unverified(long index, String problem) {
    }

    /**
     * Walks the group's stored entries from {@code bounds.first}: the first index that is missing
     * or whose value fails its checksum, or null when every entry verifies.
     */
    private static Unverified firstUnverified(RocksIterator it, int tag, Bounds bounds, String where) {
        long expected = bounds.first;
        for (it.seek(LogKeys.key(tag, bounds.first)); it.isValid(); it.next()) {
            byte[] key = it.key();
            if (!LogKeys.belongsTo(key, tag)) {
                break;
            }
            if (LogKeys.index(key) != expected) {
                return new Unverified(expected, "log of " + where + " has a gap: entry " + expected + " is missing (log ends at "
                        + bounds.last + ")");
            }
            try {
                EntryCodec.decode(expected, it.value(), where);
            } catch (LogCorruptionException e) {
                return new Unverified(expected, e.getMessage());
            }
            expected++;
        }
        return null;
    }

    @Override
    public long firstLogIndex() {
        return bounds.first;
    }

    @Override
    public long lastLogIndex() {
        return bounds.last;
    }

    @Override
    public LogEntry entry(long index) {
        byte[] value = read(index);
        return value == null ? null : EntryCodec.decode(index, value, where);
    }

    @Override
    public long term(long index) {
        byte[] value = read(index);
        return value == null ? 0 : EntryCodec.term(index, value, where);
    }

    /** The stored value of {@code index}; null if outside the bounds; throws if inside but missing. */
    private byte[] read(long index) {
        checkOpen();
        if (!bounds.contains(index)) {
            return null;
        }
        byte[] value;
        try {
            value = store.getEntry(store.logFamily(), LogKeys.key(tag, index), groupId, index);
        } catch (LogCorruptionException e) {
            // The caller (the node) stops on it; log the damage once here, not once per retry.
            if (readDamageLogged.compareAndSet(false, true)) {
                LOG.error("{}", e.getMessage());
            }
            throw e;
        }
        if (value == null && bounds.contains(index)) {
            // Re-read the bounds: a concurrent truncation may have removed it legitimately.
            throw new LogCorruptionException("log entry " + index + " of " + where + " is missing although the log"
                    + " holds " + bounds.first + ".." + bounds.last + " (a gap)");
        }
        return value;
    }

    @Override
    public void append(List<LogEntry> entries) {
        checkOpen();
        if (entries == null || entries.isEmpty()) {
            return;
        }
        Bounds current = bounds;
        Encoded encoded = encode(entries, current, current.last, -1);
        try (WriteBatch batch = new WriteBatch()) {
            encoded.putInto(batch);
            store.write(batch, false);
        } catch (RocksDBException e) {
            throw new StorageException("append of entries " + entries.get(0).getIndex() + ".." + encoded.lastIndex()
                    + " to " + where + " failed: " + e.getMessage(), e);
        }
        bounds = new Bounds(current.first, encoded.lastIndex());
    }

    /** Entries checked and encoded for the log: each key and value, and whether it also goes to {@code conf}. */
    private record Encoded(RocksDbStore store, byte[][] keys, byte[][] values, boolean[] configuration, long lastIndex) {
        void putInto(WriteBatch batch) throws RocksDBException {
            for (int i = 0; i < keys.length; i++) {
                batch.put(store.logFamily(), keys[i], values[i]);
                if (configuration[i]) {
                    batch.put(store.confFamily(), keys[i], values[i]);
                }
            }
        }
    }

    /**
     * Checks that {@code entries} continue the log after {@code keptLast} (what {@code current}
     * keeps, cut after {@code truncateAfter} if that is not negative) and encodes them.
     *
     * @throws IllegalArgumentException naming the index expected, or an entry without a valid type
     */
    private Encoded encode(List<LogEntry> entries, Bounds current, long keptLast, long truncateAfter) {
        int n = entries.size();
        byte[][] keys = new byte[n][];
        byte[][] values = new byte[n][];
        boolean[] configuration = new boolean[n];
        long expected = keptLast + 1;
        for (int i = 0; i < n; i++) {
            LogEntry entry = entries.get(i);
            if (entry.getIndex() != expected) {
                throw new IllegalArgumentException("entry index " + entry.getIndex() + " does not continue the log of "
                        + where + ": expected " + expected + " (log holds " + current.first + ".." + current.last
                        + (truncateAfter < 0 ? "" : ", cut after " + truncateAfter) + ")");
            }
            if (entry.getType() == EntryType.ENTRY_TYPE_UNKNOWN || entry.getType() == EntryType.UNRECOGNIZED) {
                throw new IllegalArgumentException("entry " + entry.getIndex() + " has no valid type (" + entry.getTypeValue() + ")");
            }
            keys[i] = LogKeys.key(tag, entry.getIndex());
            values[i] = EntryCodec.encode(entry);
            configuration[i] = entry.getType() == EntryType.ENTRY_TYPE_CONFIGURATION;
            expected++;
        }
        return new Encoded(store, keys, values, configuration, expected - 1);
    }

    /** Appends through the store's {@link GroupCommitQueue}: one write and one sync for every group queued meanwhile. */
    @Override
    public boolean appendsTogether() {
        return true;
    }

    /**
     * Encodes the write here and hands it to the store's {@link GroupCommitQueue}. Bounds: a
     * truncation is published before the write (readers stop asking for what goes), the new
     * entries after it is durable; a failed write restores the old bounds.
     */
    @Override
    public void appendAsync(long truncateAfter, List<LogEntry> entries, Consumer<RuntimeException> done) {
        checkOpen();
        Bounds current = bounds;
        long keptLast = truncateAfter < 0 ? current.last : Math.max(current.first - 1, Math.min(current.last, truncateAfter));
        Encoded encoded = encode(entries, current, keptLast, truncateAfter);
        long cutFrom = keptLast < current.last ? keptLast + 1 : -1;
        Bounds shrunk = new Bounds(current.first, keptLast);
        Bounds grown = new Bounds(current.first, encoded.lastIndex());
        String what = (cutFrom < 0 ? "" : "truncate after " + keptLast + " and ")
                + (entries.isEmpty() ? "nothing" : "append of entries " + entries.get(0).getIndex() + ".." + encoded.lastIndex());
        GroupCommitQueue queue;
        try {
            queue = store.groupCommitQueue();
        } catch (RuntimeException e) {
            done.accept(new StorageException(what + " to " + where + " failed: " + e.getMessage(), e));
            return;
        }
        if (cutFrom >= 0) {
            bounds = shrunk;
        }
        queue.submit(new GroupCommitQueue.Job() {
            @Override
            public void fill(WriteBatch batch, RocksDbStore s) throws RocksDBException {
                // A log closed since (its group stopped or removed) writes nothing more: a late write
                // must not land behind the back of the group's next incarnation.
                checkOpen();
                if (cutFrom >= 0) {
                    deleteRange(batch, cutFrom, current.last + 1);
                }
                encoded.putInto(batch);
            }

            @Override
            public boolean forceSync() {
                return cutFrom >= 0; // a truncation is always synced, as truncateSuffix's
            }

            @Override
            public void done(RuntimeException failure) {
                if (failure != null) {
                    bounds = current;
                    done.accept(new StorageException(what + " to " + where + " failed: " + failure.getMessage(), failure));
                    return;
                }
                bounds = grown;
                done.accept(null);
            }
        });
    }

    @Override
    public void truncatePrefix(long firstIndexKept) {
        checkOpen();
        Bounds current = bounds;
        if (firstIndexKept <= current.first) {
            return;
        }
        Bounds next = new Bounds(firstIndexKept, Math.max(current.last, firstIndexKept - 1));
        rewrite(current, next, "truncate prefix before " + firstIndexKept, batch -> {
            deleteRange(batch, current.first, firstIndexKept);
            batch.put(store.metaFamily(), RocksDbStore.firstIndexKey(tag), LogKeys.longBytes(firstIndexKept));
        });
    }

    @Override
    public void truncateSuffix(long lastIndexKept) {
        checkOpen();
        Bounds current = bounds;
        if (lastIndexKept >= current.last) {
            return;
        }
        long newLast = Math.max(lastIndexKept, current.first - 1);
        Bounds next = new Bounds(current.first, newLast);
        rewrite(current, next, "truncate suffix after " + lastIndexKept,
                batch -> deleteRange(batch, newLast + 1, current.last + 1));
    }

    @Override
    public void reset(long nextLogIndex) {
        checkOpen();
        if (nextLogIndex < 1) {
            throw new IllegalArgumentException("next log index must be at least 1, got " + nextLogIndex + " (" + where + ")");
        }
        Bounds current = bounds;
        rewrite(current, new Bounds(nextLogIndex, nextLogIndex - 1), "reset to next index " + nextLogIndex, batch -> {
            batch.deleteRange(store.logFamily(), LogKeys.groupStart(tag), LogKeys.groupEnd(tag));
            batch.deleteRange(store.confFamily(), LogKeys.groupStart(tag), LogKeys.groupEnd(tag));
            batch.put(store.metaFamily(), RocksDbStore.firstIndexKey(tag), LogKeys.longBytes(nextLogIndex));
        });
    }

    private interface BatchBody {
        void fill(WriteBatch batch) throws RocksDBException;
    }

    /**
     * Publishes the shrunken bounds first (so readers stop asking for what is being removed), then
     * writes the batch synced; restores the old bounds if the write fails.
     */
    private void rewrite(Bounds current, Bounds next, String what, BatchBody body) {
        bounds = next;
        try (WriteBatch batch = new WriteBatch()) {
            body.fill(batch);
            store.write(batch, true);
        } catch (RocksDBException | RuntimeException e) {
            bounds = current;
            throw new StorageException(what + " of " + where + " failed: " + e.getMessage(), e);
        }
    }

    private void deleteRange(WriteBatch batch, long fromInclusive, long toExclusive) throws RocksDBException {
        byte[] from = LogKeys.key(tag, fromInclusive);
        byte[] to = LogKeys.key(tag, toExclusive);
        batch.deleteRange(store.logFamily(), from, to);
        batch.deleteRange(store.confFamily(), from, to);
    }

    @Override
    public List<LogEntry> configurationEntries() {
        checkOpen();
        Bounds b = bounds;
        if (b.last < b.first) {
            return List.of(); // an empty log (a group that never wrote): no scan
        }
        List<byte[][]> raw = store.withIterator(store.confFamily(), it -> {
            List<byte[][]> out = new ArrayList<>();
            for (it.seek(LogKeys.key(tag, b.first)); it.isValid(); it.next()) {
                byte[] key = it.key();
                if (!LogKeys.belongsTo(key, tag) || LogKeys.index(key) > b.last) {
                    break;
                }
                out.add(new byte[][] {key, it.value()});
            }
            return out;
        });
        List<LogEntry> entries = new ArrayList<>(raw.size());
        for (byte[][] kv : raw) {
            long index = LogKeys.index(kv[0]);
            LogEntry entry = EntryCodec.decode(index, kv[1], where + " (configuration copy)");
            if (entry.getType() != EntryType.ENTRY_TYPE_CONFIGURATION) {
                throw new LogCorruptionException("configuration copy of entry " + index + " of " + where
                        + " holds a " + entry.getType() + " entry");
            }
            entries.add(entry);
        }
        return entries;
    }

    /**
     * What the shared store found damaged and dropped when it opened (a WAL record and those after
     * it, or a store moved aside), with where this group's log now ends; null when it opened intact.
     */
    @Override
    public String damageFoundAtOpen() {
        String storeDamage = store.damageFoundAtOpen();
        String own = this.damage;
        if (storeDamage == null && own == null) {
            return null;
        }
        String damage = storeDamage == null ? own : own == null ? storeDamage : storeDamage + "; " + own;
        Bounds b = bounds;
        return damage + " (the log of group '" + groupId + "' now holds " + (b.last < b.first ? "nothing from index " + b.first
                : "entries " + b.first + ".." + b.last) + ")";
    }

    /**
     * Tells {@code listener} once of the shared store's first failure, a RocksDB background error
     * or any group's failed write (see {@link RocksDbStore}); a later call replaces the listener.
     */
    @Override
    public void onAsyncFailure(Consumer<StorageException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener is required (got null)");
        }
        asyncListener = listener;
        synchronized (this) {
            if (registeredWithStore == null && !closed) {
                // The store outlives its groups: a closed log no longer tells its (stopped) node.
                registeredWithStore = e -> {
                    if (!closed) {
                        asyncListener.accept(e);
                    }
                };
                store.onAsyncFailure(registeredWithStore);
            }
        }
    }

    /**
     * Reads every entry of the log, checking each checksum and that the indexes are contiguous.
     *
     * @return the number of entries verified
     * @throws LogCorruptionException naming the first entry that fails
     */
    public long verifyAllEntries() {
        checkOpen();
        Bounds b = bounds;
        long[] count = {0};
        store.withIterator(store.logFamily(), it -> {
            long expected = b.first;
            for (it.seek(LogKeys.key(tag, b.first)); it.isValid(); it.next()) {
                byte[] key = it.key();
                if (!LogKeys.belongsTo(key, tag) || LogKeys.index(key) > b.last) {
                    break;
                }
                long index = LogKeys.index(key);
                if (index != expected) {
                    throw new LogCorruptionException("log of " + where + " has a gap: entry " + expected + " is missing");
                }
                EntryCodec.decode(index, it.value(), where);
                expected++;
                count[0]++;
            }
            if (expected != b.last + 1) {
                throw new LogCorruptionException("log of " + where + " ends at " + (expected - 1) + " but should hold entries up to " + b.last);
            }
            return null;
        });
        return count[0];
    }

    /** The group this log belongs to. */
    public String groupId() {
        return groupId;
    }

    private void checkOpen() {
        if (closed) {
            throw new StorageException("log of " + where + " is closed");
        }
    }

    /** Releases the group; the shared store stays open for other groups. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            synchronized (this) {
                if (registeredWithStore != null) {
                    store.removeAsyncFailureListener(registeredWithStore);
                }
            }
            store.release(groupId, this);
        }
    }

    @Override
    public String toString() {
        Bounds b = bounds;
        return "RocksDbLogStorage{" + where + ", " + b.first + ".." + b.last + '}';
    }
}
