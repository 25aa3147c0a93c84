package io.wheelraft.core.storage.memory;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link LogStorage} held in memory, for tests and the simulated cluster (never the production
 * default: nothing survives the process). Everything an {@link #append} returns from is
 * "durable" for as long as this object lives, so a simulated node restarted on the same instance
 * (see {@link #reopen()}) finds its log, as it would on disk.
 *
 * <p>Layout: entries sit in an {@link ArrayList} from position {@code start}; the entry of index
 * {@code i} is at {@code start + (i - firstIndex)}, so a read is O(1). Prefix truncation only
 * moves {@code start} (clearing the dropped slots for the garbage collector) and compacts the
 * list once the dead head outgrows the live part, keeping truncation amortised O(1) per entry.
 *
 * <p>Threading: the node mutates from one thread at a time; readers may run concurrently on any
 * thread and see the log either before or after a mutation, never in between (a read-write
 * lock; a batch append is atomic for readers).
 *
 * <p>Faults: {@link #faults()} injects disk errors before any mutating call (append, truncations,
 * reset); the failed call changes nothing.
 */
public final class MemoryLogStorage implements LogStorage {

    /** Below this many dead slots compaction is not worth an array copy. */
    private static final int MIN_DEAD_SLOTS_TO_COMPACT = 1024;

    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    private final StorageFaults faults = new StorageFaults();
    private final ArrayList<LogEntry> slots = new ArrayList<>();
    /** Configuration entries by index, so a restarting node finds its membership without a scan. */
    private final NavigableMap<Long, LogEntry> configurations = new TreeMap<>();
    private int start;
    private long firstIndex = 1;
    private boolean closed;

    /** The fault hook of this storage (see {@link StorageFaults}). */
    public StorageFaults faults() {
        return faults;
    }

    @Override
    public long firstLogIndex() {
        lock.readLock().lock();
        try {
            checkOpen();
            return firstIndex;
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public long lastLogIndex() {
        lock.readLock().lock();
        try {
            checkOpen();
            return lastIndex();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public LogEntry entry(long index) {
        lock.readLock().lock();
        try {
            checkOpen();
            return held(index);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public long term(long index) {
        lock.readLock().lock();
        try {
            checkOpen();
            LogEntry e = held(index);
            return e == null ? 0 : e.getTerm();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void append(List<LogEntry> entries) {
        if (entries == null) {
            throw new IllegalArgumentException("entries to append must not be null");
        }
        lock.writeLock().lock();
        try {
            checkOpen();
            // Validate the whole batch before touching anything: a batch is all or nothing.
            long expected = lastIndex() + 1;
            for (int i = 0; i < entries.size(); i++) {
                LogEntry e = entries.get(i);
                if (e == null) {
                    throw new IllegalArgumentException("entry " + i + " of the batch is null");
                }
                if (e.getIndex() != expected) {
                    throw new IllegalArgumentException("append does not continue the log: expected index " + expected
                            + " but entry " + i + " of the batch has index " + e.getIndex()
                            + " (log holds " + firstIndex + ".." + lastIndex() + ")");
                }
                expected++;
            }
            if (entries.isEmpty()) {
                return;
            }
            faults.beforeWrite();
            slots.ensureCapacity(slots.size() + entries.size());
            for (LogEntry e : entries) {
                slots.add(e);
                if (e.getType() == EntryType.ENTRY_TYPE_CONFIGURATION) {
                    configurations.put(e.getIndex(), e);
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public void truncatePrefix(long firstIndexKept) {
        lock.writeLock().lock();
        try {
            checkOpen();
            if (firstIndexKept <= firstIndex) {
                return;
            }
            faults.beforeWrite();
            long last = lastIndex();
            if (firstIndexKept > last) {
                // Everything goes; the log stays empty and continues at firstIndexKept.
                clearAll(firstIndexKept);
                return;
            }
            int drop = (int) (firstIndexKept - firstIndex);
            for (int i = start; i < start + drop; i++) {
                slots.set(i, null);
            }
            start += drop;
            firstIndex = firstIndexKept;
            configurations.headMap(firstIndexKept, false).clear();
            compactIfWorthIt();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>No-op if {@code lastIndexKept >= lastLogIndex()}. Keeping less than {@code
     * firstLogIndex() - 1} would reach into entries already compacted into a snapshot (and so
     * committed), which Raft never does: that is rejected with {@link IllegalArgumentException}.
     */
    @Override
    public void truncateSuffix(long lastIndexKept) {
        lock.writeLock().lock();
        try {
            checkOpen();
            long last = lastIndex();
            if (lastIndexKept >= last) {
                return;
            }
            if (lastIndexKept < firstIndex - 1) {
                throw new IllegalArgumentException("cannot truncate the suffix after index " + lastIndexKept
                        + ": entries before the first index " + firstIndex + " are compacted (committed)");
            }
            faults.beforeWrite();
            int keep = start + (int) (lastIndexKept - firstIndex + 1);
            slots.subList(keep, slots.size()).clear();
            configurations.tailMap(lastIndexKept, false).clear();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code nextLogIndex < 1}
     */
    @Override
    public void reset(long nextLogIndex) {
        if (nextLogIndex < 1) {
            throw new IllegalArgumentException("next log index after reset must be at least 1, got " + nextLogIndex);
        }
        lock.writeLock().lock();
        try {
            checkOpen();
            faults.beforeWrite();
            clearAll(nextLogIndex);
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public List<LogEntry> configurationEntries() {
        lock.readLock().lock();
        try {
            checkOpen();
            return List.copyOf(configurations.values());
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Closes the storage; any later call except {@link #reopen()} throws {@link StorageException}. Idempotent. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            closed = true;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Makes a closed storage usable again with everything it held, as a process restarting on
     * the same disk. For the simulation, which keeps a crashed node's storage across restarts.
     */
    public void reopen() {
        lock.writeLock().lock();
        try {
            closed = false;
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public String toString() {
        lock.readLock().lock();
        try {
            return "MemoryLogStorage[" + firstIndex + ".." + lastIndex() + (closed ? ", closed]" : "]");
        } finally {
            lock.readLock().unlock();
        }
    }

    private long lastIndex() {
        return firstIndex + (slots.size() - start) - 1;
    }

    private LogEntry held(long index) {
        if (index < firstIndex || index > lastIndex()) {
            return null;
        }
        return slots.get(start + (int) (index - firstIndex));
    }

    private void clearAll(long newFirstIndex) {
        slots.clear();
        slots.trimToSize();
        configurations.clear();
        start = 0;
        firstIndex = newFirstIndex;
    }

    private void compactIfWorthIt() {
        int live = slots.size() - start;
        if (start >= MIN_DEAD_SLOTS_TO_COMPACT && start > live) {
            slots.subList(0, start).clear();
            start = 0;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new StorageException("memory log storage is closed");
        }
    }
}
