package io.wheelraft.core.consensus;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;

/**
 * The consensus machine's view of the log: entries already durable in {@link LogStorage}, plus
 * an in-memory tail of entries handed to the disk but not yet acknowledged ("unstable").
 *
 * <p>Invariants (why reads are safe while the disk writes in the background):
 * <ul>
 *   <li>Indexes below {@code unstableOffset} are read from storage; those entries were
 *       acknowledged and the disk writer never rewrites them without a truncation that first
 *       lowers {@code unstableOffset} below them.</li>
 *   <li>Indexes at or above {@code unstableOffset} are read only from memory, so a truncation
 *       still queued on the disk never shows through.</li>
 *   <li>{@code persistedIndex <= lastIndex()}: the highest index known durable with the term the
 *       log holds now. The leader counts itself in a quorum only up to it; a follower
 *       acknowledges only up to it.</li>
 * </ul>
 * Owned by one thread (the node's lane); not thread-safe.
 */
public final class RaftLog {

    private final LogStorage storage;
    /** Durable entries also kept in memory (read before storage). */
    private final RecentEntries recent;
    /** Index and term of the entry just before the log's first entry (snapshot boundary; 0 at start). */
    private long baseIndex;
    private long baseTerm;
    private final ArrayList<LogEntry> unstable = new ArrayList<>();
    private long unstableOffset;
    private long persistedIndex;
    /**
     * The index and term of the last durable entry, once known (index -1: not known). Every
     * heartbeat a follower accepts and every vote request it answers asks for the term of its last
     * entry; with the recent-entries ring released (a quiet group) or disabled, that was a RocksDB
     * read each time: 4 % of a process's CPU while 100,000 groups elected and settled. Read only
     * below {@code unstableOffset}: a truncation moves that offset below a replaced entry, and
     * {@link #stableTo} sets both again before any index at or above it is durable once more.
     */
    private long lastDurableIndex = -1;
    private long lastDurableTerm;

    /**
     * Opens the log view over {@code storage}, whose entries must continue the snapshot ending at
     * {@code (snapshotIndex, snapshotTerm)} (0, 0 without a snapshot): the node shell resets a
     * log that ends before the snapshot or disagrees with it, and refuses one with a gap.
     *
     * @throws IllegalStateException if the stored log starts after {@code snapshotIndex + 1}
     */
    public RaftLog(LogStorage storage, long snapshotIndex, long snapshotTerm) {
        this(storage, snapshotIndex, snapshotTerm, RecentEntries.none());
    }

    /** As above, keeping recently persisted entries in {@code recent} (shared with the state machine caller). */
    public RaftLog(LogStorage storage, long snapshotIndex, long snapshotTerm, RecentEntries recent) {
        this.storage = storage;
        this.recent = recent;
        long first = storage.firstLogIndex();
        long last = storage.lastLogIndex();
        if (first - 1 > snapshotIndex) {
            throw new IllegalStateException("the log starts at index " + first + " but the latest snapshot ends at "
                    + snapshotIndex + ": entries " + (snapshotIndex + 1) + ".." + (first - 1) + " are missing");
        }
        if (last >= first && last >= snapshotIndex && first - 1 < snapshotIndex && first > 1) {
            // Entries before the snapshot kept as a margin for slow followers: the first one is the
            // base (its term is known), the rest stay readable.
            this.baseIndex = first;
            this.baseTerm = storage.term(first);
        } else if (last >= snapshotIndex && first - 1 < snapshotIndex) {
            this.baseIndex = 0; // a log from index 1 holds everything up to the snapshot
            this.baseTerm = 0;
        } else {
            this.baseIndex = snapshotIndex;
            this.baseTerm = snapshotTerm;
        }
        this.unstableOffset = Math.max(last, baseIndex) + 1;
        this.persistedIndex = unstableOffset - 1;
    }

    /** Index of the entry before the first one held (the compaction or snapshot boundary). */
    public long baseIndex() {
        return baseIndex;
    }

    /**
     * Log compaction after a durable snapshot at {@code snapshotIndex}: forgets entries up to
     * {@code snapshotIndex - margin} (never past what is on disk).
     *
     * @return the first index storage must keep ({@link LogStorage#truncatePrefix}), or -1 if nothing moved
     */
    public long compact(long snapshotIndex, long margin) {
        long target = Math.min(snapshotIndex - margin, unstableOffset - 1);
        if (target <= baseIndex) {
            return -1;
        }
        baseTerm = term(target); // read before the boundary moves past it
        baseIndex = target;
        return target + 1;
    }

    /** The group went quiet: the recent-entries ring is not needed until it wakes (see {@link RecentEntries#release}). */
    void releaseRecentEntries() {
        recent.release();
    }

    /** Whether the recent-entries ring is allocated (see {@link RecentEntries#holdsRing}). */
    public boolean holdsRecentEntries() {
        return recent.holdsRing();
    }

    /**
     * Installs a snapshot from the leader ending at {@code (index, term)}. If this log holds that
     * entry on disk, the entries after it are kept (Raft §7) and only the prefix goes; otherwise
     * the whole log is dropped and continues at {@code index + 1}.
     *
     * @return true if the whole log was dropped (storage must be reset to {@code index + 1})
     */
    public boolean installSnapshot(long index, long term) {
        if (index < unstableOffset && index >= baseIndex && term(index) == term) {
            baseTerm = term;
            baseIndex = index;
            return false;
        }
        baseIndex = index;
        baseTerm = term;
        unstable.clear();
        recent.clear();
        lastDurableIndex = -1;
        unstableOffset = index + 1;
        persistedIndex = index;
        return true;
    }

    public long firstIndex() {
        return baseIndex + 1;
    }

    public long lastIndex() {
        return unstable.isEmpty() ? unstableOffset - 1 : unstableOffset + unstable.size() - 1;
    }

    public long lastTerm() {
        return term(lastIndex());
    }

    public long persistedIndex() {
        return persistedIndex;
    }

    /** The term at {@code index}; 0 if the log does not hold it (and it is not the base). */
    public long term(long index) {
        if (index == baseIndex) {
            return baseTerm;
        }
        if (index < baseIndex || index > lastIndex()) {
            return 0;
        }
        if (index >= unstableOffset) {
            return unstable.get((int) (index - unstableOffset)).getTerm();
        }
        if (index == lastDurableIndex) {
            return lastDurableTerm;
        }
        LogEntry cached = recent.get(index);
        if (cached != null) {
            return cached.getTerm();
        }
        long t = storage.term(index);
        if (index == unstableOffset - 1 && t != 0) {
            lastDurableIndex = index;
            lastDurableTerm = t;
        }
        return t;
    }

    public boolean matchTerm(long index, long term) {
        if (index == 0) {
            return term == 0;
        }
        long t = term(index);
        return t != 0 && t == term;
    }

    /** The entry at {@code index}, or null if not held (compacted or beyond the end). */
    public LogEntry entry(long index) {
        if (index <= baseIndex || index > lastIndex()) {
            return null;
        }
        if (index >= unstableOffset) {
            return unstable.get((int) (index - unstableOffset));
        }
        LogEntry cached = recent.get(index);
        return cached != null ? cached : storage.entry(index);
    }

    /**
     * Entries from {@code from}, at most {@code maxCount} and about {@code maxBytes} (at least
     * one entry when any is available).
     */
    public List<LogEntry> entries(long from, int maxCount, long maxBytes) {
        long last = lastIndex();
        if (from > last || from <= baseIndex) {
            return List.of();
        }
        int n = (int) Math.min(maxCount, last - from + 1);
        List<LogEntry> out = new ArrayList<>(n);
        long bytes = 0;
        for (long i = from; i < from + n; i++) {
            LogEntry e = entry(i);
            if (e == null) {
                break;
            }
            bytes += e.getData().size() + 16;
            if (!out.isEmpty() && bytes > maxBytes) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /**
     * Is a log ending at {@code (lastTerm, lastIndex)} at least as up to date as this one
     * (Raft §5.4.1)?
     */
    public boolean isUpToDate(long otherLastIndex, long otherLastTerm) {
        long myTerm = lastTerm();
        return otherLastTerm > myTerm || (otherLastTerm == myTerm && otherLastIndex >= lastIndex());
    }

    /** Leader path: appends entries that continue the log. Returns the new last index. */
    public long append(List<LogEntry> entries) {
        if (!entries.isEmpty() && entries.get(0).getIndex() != lastIndex() + 1) {
            throw new IllegalStateException("append at " + entries.get(0).getIndex() + " does not continue the log ending at " + lastIndex());
        }
        unstable.addAll(entries);
        return lastIndex();
    }

    /**
     * Follower path: the leader's entries follow {@code prevIndex}, which is known to match.
     * Skips entries already held with the same term, drops a conflicting suffix, appends the rest.
     *
     * @return the disk work this requires (possibly nothing)
     */
    public PersistRequest appendFromLeader(long prevIndex, List<LogEntry> entries) {
        int skip = 0;
        long truncateAfter = -1;
        for (LogEntry e : entries) {
            long idx = e.getIndex();
            if (idx <= baseIndex) {
                skip++;
                continue;
            }
            if (idx > lastIndex()) {
                break;
            }
            if (term(idx) == e.getTerm()) {
                skip++;
                continue;
            }
            truncateAfter = idx - 1;
            break;
        }
        List<LogEntry> fresh = entries.subList(skip, entries.size());
        if (fresh.isEmpty()) {
            return null;
        }
        // Every entry in memory was already handed to the disk writer (acknowledged or not), so
        // any overwrite must truncate on disk too, queued behind those writes.
        boolean needsStorageTruncate = truncateAfter >= 0;
        if (needsStorageTruncate) {
            long lastBefore = lastIndex();
            truncateSuffix(truncateAfter);
            // Durable entries after the cut are being replaced: no reader may see them again.
            recent.invalidate(truncateAfter + 1, lastBefore);
            unstableOffset = Math.min(unstableOffset, truncateAfter + 1);
        }
        unstable.addAll(fresh);
        return new PersistRequest(needsStorageTruncate ? truncateAfter : -1, List.copyOf(fresh));
    }

    private void truncateSuffix(long lastKept) {
        if (lastKept >= unstableOffset) {
            int keep = (int) (lastKept - unstableOffset + 1);
            unstable.subList(keep, unstable.size()).clear();
        } else {
            unstable.clear();
        }
        persistedIndex = Math.min(persistedIndex, lastKept);
    }

    /** The unstable entries from {@code fromIndex} on (what the leader must hand to its disk). */
    public List<LogEntry> unstableFrom(long fromIndex) {
        if (fromIndex < unstableOffset) {
            throw new IllegalArgumentException("index " + fromIndex + " is already stable");
        }
        return List.copyOf(unstable.subList((int) (fromIndex - unstableOffset), unstable.size()));
    }

    /**
     * The disk acknowledged entries up to {@code index} written with {@code term}. Ignored when
     * the log has since replaced that entry (a later truncation's own acknowledgement covers it).
     *
     * @return true if the persisted index advanced
     */
    public boolean stableTo(long index, long term) {
        if (index < unstableOffset || index > lastIndex() || term(index) != term) {
            return false;
        }
        int n = (int) (index - unstableOffset + 1);
        for (int i = 0; i < n; i++) {
            recent.put(unstable.get(i));
        }
        unstable.subList(0, n).clear();
        unstableOffset = index + 1;
        lastDurableIndex = index;
        lastDurableTerm = term;
        if (index > persistedIndex) {
            persistedIndex = index;
            return true;
        }
        return false;
    }

    /** First index holding {@code term} at or before {@code from}, walking back (conflict hint). */
    public long firstIndexOfTerm(long from, long term) {
        long i = from;
        while (i - 1 > baseIndex && term(i - 1) == term) {
            i--;
        }
        return i;
    }

    /** Last index whose term is {@code term}, or 0 if the log holds none (leader's conflict skip). */
    public long lastIndexOfTerm(long term) {
        for (long i = lastIndex(); i > baseIndex; i--) {
            long t = term(i);
            if (t == term) {
                return i;
            }
            if (t < term) {
                return 0;
            }
        }
        return 0;
    }

    /** Disk work: optionally drop storage entries after {@code truncateAfter} (-1: none), then append. */
    public record PersistRequest(long truncateAfter, List<LogEntry> entries) {
        public long lastIndex() {
            return entries.get(entries.size() - 1).getIndex();
        }

        public long lastTerm() {
            return entries.get(entries.size() - 1).getTerm();
        }
    }
}
