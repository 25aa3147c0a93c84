package io.wheelraft.timer;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The bucket array of a {@link HashedWheelTimer}: a single-owner structure, guarded by the
 * timer's lock, that knows nothing about threads or clocks. Times are nanoseconds relative to
 * the timer's start; tick {@code n} ends at {@code n * tickNanos}.
 *
 * <p>A timeout with deadline {@code d} belongs to tick {@code ceil(d / tickNanos)} and sits in
 * slot {@code tick & mask}. Timeouts from later revolutions share the slot; they are told apart
 * by their absolute deadline, so no per-entry round counter is kept. A timeout whose tick has
 * already been processed (a deadline in the past, or one that raced with the worker) goes to an
 * extra "overdue" slot that is emptied on the next pass, so it is never lost.
 *
 * <p>Each slot keeps a lower bound of its deadlines ({@code minDeadline}); it is exact after
 * every sweep and may be stale-low after a cancel. That bound lets the owner find the next
 * tick with work without visiting empty ticks, which is what lets the worker park.
 *
 * <p>Two lists hold timeouts that are not in a slot yet. <em>Staged</em> timeouts were scheduled
 * while the worker was ticking, with their delay (not a deadline) in {@code deadline}, because
 * the caller did not read the clock; {@link #stampStaged} turns each delay into a deadline from
 * a clock reading taken after the caller's lock section ended (so the deadline is never earlier
 * than "call time + delay") and moves the timeout to the <em>stamped</em> list, still without
 * touching a slot. Only the worker links them into slots ({@link #linkStamped},
 * {@link #drainStaged}). Both lists are singly linked and never unlinked from in the middle: a
 * cancelled timeout stays in its list and the next stamp or drain drops it (see
 * {@link WheelTimeout#cancel}). In the reset pattern (schedule, cancel the previous) almost every
 * timeout is cancelled while in a list, so the slots, cold in cache when the wheel holds many
 * timeouts, are not touched at all. {@link #size} counts list members, cancelled or not, until
 * they are dropped.
 */
final class WheelBuckets {

    static final Comparator<WheelTimeout> BY_DEADLINE = Comparator.comparingLong(t -> t.deadline);

    private final long tickNanos;
    private final int wheelSize;
    private final int mask;
    private final int overdueSlot;
    /**
     * The staged and stamped lists. They are anchored in a short-lived object, replaced at every
     * drain, rather than in the long-lived slot arrays: with a generational collector such as G1,
     * storing a young timeout into an old object costs a card-marking barrier with a full fence,
     * and the staged list is written on every schedule on the callers' fast path.
     */
    private StagedList staged = new StagedList();
    private final WheelTimeout[] heads;
    private final WheelTimeout[] tails;
    private final long[] minDeadline;
    /** Every tick up to and including this one has been fully expired. */
    private long processedTick;
    private long size;

    WheelBuckets(long tickNanos, int wheelSize) {
        this.tickNanos = tickNanos;
        this.wheelSize = wheelSize;
        this.mask = wheelSize - 1;
        this.overdueSlot = wheelSize;
        this.heads = new WheelTimeout[wheelSize + 1];
        this.tails = new WheelTimeout[wheelSize + 1];
        this.minDeadline = new long[wheelSize + 1];
        java.util.Arrays.fill(minDeadline, Long.MAX_VALUE);
    }

    long size() {
        return size;
    }

    /**
     * Links {@code t} into its slot.
     *
     * @return the time (relative) at which the owner must next process the wheel for {@code t}
     */
    long add(WheelTimeout t) {
        long tick = ceilTick(t.deadline);
        if (tick <= processedTick) {
            link(overdueSlot, t);
            return boundary(processedTick + 1);
        }
        int slot = (int) (tick & mask);
        link(slot, t);
        if (t.deadline < minDeadline[slot]) {
            minDeadline[slot] = t.deadline;
        }
        return boundary(tick);
    }

    /**
     * Appends {@code t}, whose {@code deadline} field holds its delay and which was never linked
     * (its {@code next} is null), to the staged list; the owner must call {@link #drainStaged}
     * within about a tick.
     */
    void stage(WheelTimeout t) {
        StagedList list = staged;
        WheelTimeout tail = list.stagedTail;
        t.slot = WheelTimeout.STAGED;
        if (tail == null) {
            list.stagedHead = t;
        } else {
            tail.next = t;
        }
        list.stagedTail = t;
        size++;
    }

    boolean hasStaged() {
        StagedList list = staged;
        return list.stagedHead != null || list.stampedHead != null;
    }

    /** Replaces an empty list anchor so that it stays young (see {@link #staged}). */
    void renewStagedAnchor() {
        if (!hasStaged()) {
            staged = new StagedList();
        }
    }

    /** True while {@code t} waits in the staged list, its delay not yet turned into a deadline. */
    boolean isStaged(WheelTimeout t) {
        return t.slot == WheelTimeout.STAGED;
    }

    /** True while {@code t} is linked into a slot of the wheel. */
    boolean isInSlot(WheelTimeout t) {
        return t.slot >= 0;
    }

    /**
     * Gives every staged timeout the deadline {@code now + delay} and moves it to the stamped
     * list, without linking it into a slot (the worker does that at its next pass); drops the
     * cancelled ones. {@code now} must have been read after the lock that guards this wheel was
     * taken, so that it is not earlier than any staged call.
     *
     * @return how many cancelled timeouts were dropped
     */
    int stampStaged(long now) {
        StagedList list = staged;
        long sizeBefore = size;
        WheelTimeout kept = keepPending(list.stagedHead);
        WheelTimeout keptLast = keptTail;
        list.stagedHead = null;
        list.stagedTail = null;
        if (kept != null) {
            for (WheelTimeout t = kept; t != null; t = t.next) {
                t.deadline = ManualClock.saturatedAdd(now, t.deadline);
                t.slot = WheelTimeout.STAMPED;
            }
            if (list.stampedTail == null) {
                list.stampedHead = kept;
            } else {
                list.stampedTail.next = kept;
            }
            list.stampedTail = keptLast;
        }
        return (int) (sizeBefore - size); // at most the staged list's length
    }

    /**
     * Links every stamped timeout into its slot, dropping the cancelled ones. The worker calls it
     * before {@link #expire}, so that a stamped deadline that has passed fires in the same pass.
     *
     * @return how many cancelled timeouts were dropped
     */
    int linkStamped() {
        StagedList list = staged;
        WheelTimeout t = list.stampedHead;
        list.stampedHead = null;
        list.stampedTail = null;
        return linkAll(t, false, 0);
    }

    /**
     * Links every stamped timeout, then gives every staged one the deadline {@code now + delay}
     * and links it, in staging order; drops the cancelled ones and starts a fresh list anchor.
     * {@code now} must have been read after the lock that guards this wheel was taken, so that
     * it is not earlier than any staged call.
     *
     * @return how many cancelled timeouts were dropped
     */
    int drainStaged(long now) {
        StagedList list = staged;
        staged = new StagedList();
        return linkAll(list.stampedHead, false, 0) + linkAll(list.stagedHead, true, now);
    }

    /**
     * Links the chain starting at {@code t} into slots (stamping each with {@code now + delay}
     * first if {@code stamp}), dropping cancelled timeouts.
     *
     * <p>A cancel does not take the lock while it finds the timeout in a list. It sets the state
     * (a CAS) and then reads {@code slot}; here we write {@code slot} (by linking) and then read
     * the state, with a full fence in between. So at least one side sees the other: either the
     * cancel sees the timeout in a slot and unlinks it under the lock, or we see it cancelled and
     * unlink it at once. A cancelled timeout is never left in a slot until its tick comes round.
     */
    private int linkAll(WheelTimeout t, boolean stamp, long now) {
        int dropped = 0;
        while (t != null) {
            WheelTimeout next = t.next;
            t.next = null;
            t.slot = WheelTimeout.UNLINKED;
            size--;
            if (t.isPending()) {
                if (stamp) {
                    t.deadline = ManualClock.saturatedAdd(now, t.deadline);
                }
                add(t);
                java.lang.invoke.VarHandle.fullFence();
                if (!t.isPending()) {
                    unlink(t);
                    dropped++;
                }
            } else {
                dropped++;
            }
            t = next;
        }
        return dropped;
    }

    /**
     * Drops the cancelled timeouts waiting in the staged and stamped lists (which a cancel left
     * there), so that {@link #size} counts only live ones.
     *
     * @return how many were dropped
     */
    int purgeCancelled() {
        StagedList list = staged;
        long before = size;
        list.stampedHead = keepPending(list.stampedHead);
        list.stampedTail = keptTail;
        list.stagedHead = keepPending(list.stagedHead);
        list.stagedTail = keptTail;
        keptTail = null;
        return (int) (before - size);
    }

    /** Last timeout {@link #keepPending} kept (null if none): its second result, read right after the call. */
    private WheelTimeout keptTail;

    /**
     * Drops the cancelled timeouts of one singly linked list (each marked unlinked and no longer
     * counted), keeping the order of the rest; returns the new head and leaves the new tail in
     * {@link #keptTail}.
     */
    private WheelTimeout keepPending(WheelTimeout head) {
        WheelTimeout kept = null;
        WheelTimeout tail = null;
        for (WheelTimeout t = head; t != null; ) {
            WheelTimeout next = t.next;
            t.next = null;
            if (t.isPending()) {
                if (tail == null) {
                    kept = t;
                } else {
                    tail.next = t;
                }
                tail = t;
            } else {
                t.slot = WheelTimeout.UNLINKED;
                size--;
            }
            t = next;
        }
        keptTail = tail;
        return kept;
    }

    /**
     * Unlinks {@code t} if it is linked into a slot; false if it is not (taken by a sweep or
     * stop, or waiting in a list, which drops it later).
     */
    boolean remove(WheelTimeout t) {
        if (t.slot < 0) {
            return false;
        }
        unlink(t);
        return true;
    }

    /**
     * Moves every timeout with {@code deadline <= now} to {@code out}, in deadline order (ties in
     * the order they were added).
     */
    void expire(long now, List<WheelTimeout> out) {
        int first = out.size();
        sweepAll(overdueSlot, out);
        long from = processedTick + 1;
        long to = ceilTick(now);
        if (to - from >= wheelSize) {
            to = from + wheelSize - 1; // a long gap: visit every slot once
        }
        for (long tick = from; tick <= to; tick++) {
            int slot = (int) (tick & mask);
            if (minDeadline[slot] <= now) {
                sweep(slot, now, out);
            }
        }
        processedTick = Math.max(processedTick, Math.floorDiv(now, tickNanos));
        if (out.size() - first > 1) {
            // Stable sort: equal deadlines share a slot, where they are in insertion order.
            out.subList(first, out.size()).sort(BY_DEADLINE);
        }
    }

    /**
     * The end of the earliest tick that may hold a due timeout (relative time), or
     * {@code Long.MAX_VALUE} if the wheel is empty. Visits at most one revolution of slots.
     */
    long nextFireTime() {
        return nextFireTime(Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * Like {@link #nextFireTime()}, but the caller will pass again by {@code limit} anyway, so
     * the scan stops at the tick holding {@code limit} and returns at most {@code limit}; a
     * ticking worker then visits one or two slots per pass instead of a revolution.
     *
     * <p>With {@code slackNanos} below a tick, the time returned for a tick holding work is not
     * its end but, if earlier, the earliest deadline in it plus {@code slackNanos}: the worker
     * may pass in the middle of a tick, firing what is due by then ({@link #expire} takes only
     * deadlines {@code <= now} and leaves the rest of the tick for a later pass). Never earlier
     * than a deadline, so nothing fires early.
     */
    long nextFireTime(long limit, long slackNanos) {
        if (heads[overdueSlot] != null) {
            return boundary(processedTick + 1);
        }
        if (size == 0) {
            return Long.MAX_VALUE;
        }
        long earliest = Long.MAX_VALUE;
        for (long tick = processedTick + 1, end = tick + wheelSize; tick < end; tick++) {
            long tickEnd = boundary(tick);
            long min = minDeadline[(int) (tick & mask)];
            if (min != Long.MAX_VALUE) {
                if (min <= tickEnd) {
                    return Math.min(Math.min(tickEnd, ManualClock.saturatedAdd(min, slackNanos)), limit);
                }
                earliest = Math.min(earliest, min);
            }
            if (tickEnd >= limit) {
                return limit;
            }
        }
        return earliest == Long.MAX_VALUE ? Long.MAX_VALUE
                : Math.min(boundary(ceilTick(earliest)), ManualClock.saturatedAdd(earliest, slackNanos));
    }

    /** A lower bound of the earliest pending deadline (relative), or Long.MAX_VALUE if empty. */
    long earliestDeadline() {
        if (heads[overdueSlot] != null) {
            return Long.MIN_VALUE;
        }
        if (size == 0) {
            return Long.MAX_VALUE;
        }
        long earliest = Long.MAX_VALUE;
        for (int slot = 0; slot < wheelSize; slot++) {
            earliest = Math.min(earliest, minDeadline[slot]);
        }
        return earliest;
    }

    /**
     * Unlinks everything still pending into {@code out} (used by stop); staged timeouts get the
     * deadline {@code now + delay} so that the caller can order them with the rest.
     */
    void drainPending(Collection<Timeout> out, long now) {
        drainStaged(now); // cancelled ones are dropped; stop() resets the pending count itself
        for (int slot = 0; slot <= overdueSlot; slot++) {
            WheelTimeout t = heads[slot];
            while (t != null) {
                WheelTimeout next = t.next;
                unlink(t);
                if (t.isPending()) {
                    out.add(t);
                }
                t = next;
            }
        }
    }

    private void sweepAll(int slot, List<WheelTimeout> out) {
        WheelTimeout t = heads[slot];
        while (t != null) {
            WheelTimeout next = t.next;
            unlink(t);
            out.add(t);
            t = next;
        }
    }

    private void sweep(int slot, long now, List<WheelTimeout> out) {
        long min = Long.MAX_VALUE;
        WheelTimeout t = heads[slot];
        while (t != null) {
            WheelTimeout next = t.next;
            if (t.deadline <= now) {
                unlink(t);
                out.add(t);
            } else if (t.deadline < min) {
                min = t.deadline;
            }
            t = next;
        }
        minDeadline[slot] = min;
    }

    private void link(int slot, WheelTimeout t) {
        t.slot = slot;
        WheelTimeout tail = tails[slot];
        t.prev = tail;
        t.next = null;
        if (tail == null) {
            heads[slot] = t;
        } else {
            tail.next = t;
        }
        tails[slot] = t;
        size++;
    }

    private void unlink(WheelTimeout t) {
        int slot = t.slot;
        WheelTimeout prev = t.prev;
        WheelTimeout next = t.next;
        if (prev == null) {
            heads[slot] = next;
        } else {
            prev.next = next;
        }
        if (next == null) {
            tails[slot] = prev;
        } else {
            next.prev = prev;
        }
        t.prev = null;
        t.next = null;
        t.slot = WheelTimeout.UNLINKED;
        if (heads[slot] == null) {
            minDeadline[slot] = Long.MAX_VALUE;
        }
        size--;
    }

    private long ceilTick(long deadline) {
        if (deadline <= 0) {
            return 0;
        }
        long q = deadline / tickNanos;
        return q * tickNanos == deadline ? q : q + 1;
    }

    private long boundary(long tick) {
        return tick > Long.MAX_VALUE / tickNanos ? Long.MAX_VALUE : tick * tickNanos;
    }

    /** Heads and tails of the staged and stamped lists; see {@link WheelBuckets#staged}. */
    private static final class StagedList {
        WheelTimeout stagedHead;
        WheelTimeout stagedTail;
        WheelTimeout stampedHead;
        WheelTimeout stampedTail;
    }
}
