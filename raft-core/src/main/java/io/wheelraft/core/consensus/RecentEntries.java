package io.wheelraft.core.consensus;

import io.wheelraft.proto.LogEntry;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The most recent durable log entries, kept in memory so the hot paths do not read them back
 * from storage: the term checks of every AppendEntries (leader and follower), the commit rule, and
 * the state machine applying what was just committed. Reading an entry back from the RocksDB log
 * costs a lookup, a checksum and a parse each time.
 *
 * <p>A ring of {@code capacity} slots indexed by log index; a slot answers only for the index it
 * holds, so an entry pushed out by a later one is simply read from storage again. Entries whose
 * data is larger than {@code maxEntryBytes} are not kept (the ring's memory stays bounded by
 * about {@code capacity * maxEntryBytes}). The array is allocated on first use, so idle groups
 * cost nothing.
 *
 * <p>Written by the node's Raft lane only ({@link #put}, {@link #invalidate}, {@link #clear});
 * {@link #get} may be called from any thread. A reader never sees an entry that was replaced:
 * the lane invalidates a slot before the log may hold a different entry at that index.
 */
public final class RecentEntries {

    private final int capacity;
    private final int mask;
    private final int maxEntryBytes;
    private volatile AtomicReferenceArray<LogEntry> slots;

    /** A cache holding nothing: every read goes to storage. */
    public static RecentEntries none() {
        return new RecentEntries(0, 0);
    }

    /**
     * @param capacity      entries kept (rounded up to a power of two); 0 disables the cache
     * @param maxEntryBytes larger entries are not kept
     */
    public RecentEntries(int capacity, int maxEntryBytes) {
        if (capacity < 0 || capacity > (1 << 24)) {
            throw new IllegalArgumentException("capacity must be in 0..2^24, was " + capacity);
        }
        int c = capacity == 0 ? 0 : 1;
        while (c < capacity) {
            c <<= 1;
        }
        this.capacity = c;
        this.mask = this.capacity - 1;
        this.maxEntryBytes = maxEntryBytes;
    }

    int capacity() {
        return capacity;
    }

    /** Keeps {@code entry} (if small enough), replacing whatever its slot held. */
    public void put(LogEntry entry) {
        if (capacity == 0 || entry.getData().size() > maxEntryBytes) {
            return;
        }
        AtomicReferenceArray<LogEntry> s = slots;
        if (s == null) {
            s = new AtomicReferenceArray<>(capacity);
            slots = s;
        }
        s.set((int) (entry.getIndex() & mask), entry);
    }

    /** The entry at {@code index} if it is held here, else null. */
    public LogEntry get(long index) {
        AtomicReferenceArray<LogEntry> s = slots;
        if (s == null) {
            return null;
        }
        LogEntry e = s.get((int) (index & mask));
        return e != null && e.getIndex() == index ? e : null;
    }

    /** Forgets the entries from {@code from} to {@code to} (inclusive): the log no longer holds them. */
    public void invalidate(long from, long to) {
        AtomicReferenceArray<LogEntry> s = slots;
        if (s == null || from > to) {
            return;
        }
        long last = Math.min(to, from + capacity - 1); // beyond one lap every slot has been visited
        for (long i = from; i <= last; i++) {
            int slot = (int) (i & mask);
            LogEntry e = s.get(slot);
            if (e != null && e.getIndex() >= from && e.getIndex() <= to) {
                s.set(slot, null);
            }
        }
    }

    /**
     * Lets go of the ring while nothing needs it (the group went quiet: every member holds and has
     * applied the whole log, so nothing reads recent entries until the group wakes). The entries
     * held stay valid for any reader that already has the ring; the next {@link #put} allocates a
     * new one. Saves the ring's slots and the entries they keep alive for every quiet replica, the
     * largest share of an idle group's memory in a process hosting many.
     */
    public void release() {
        slots = null;
    }

    /** Whether the ring is allocated: after the first {@link #put} of a kept entry, until {@link #release}. */
    public boolean holdsRing() {
        return slots != null;
    }

    /** Forgets everything (the log was reset under a snapshot). */
    public void clear() {
        AtomicReferenceArray<LogEntry> s = slots;
        if (s == null) {
            return;
        }
        for (int i = 0; i < capacity; i++) {
            s.set(i, null);
        }
    }
}
