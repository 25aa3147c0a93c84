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
 * <p>One more slot holds <em>staged</em> timeouts: scheduled while the worker was ticking, with
 * their delay (not a deadline) in {@code deadline}, because the caller did not read the clock.
 * {@link #drainStaged} turns each delay into a deadline from a clock reading taken after the
 * caller's lock section ended, so the deadline is never earlier than "call time + delay". Being
 * a slot like the others, a staged timeout is cancelled (unlinked), counted and drained by stop
 * exactly like a linked one.
 */
final class WheelBuckets {

    static final Comparator<WheelTimeout> BY_DEADLINE = Comparator.comparingLong(t -> t.deadline);

    private final long tickNanos;
    private final int wheelSize;
    private final int mask;
    private final int overdueSlot;
    /** The {@code slot} value of a staged timeout (an index past the arrays: staged ones live in {@link #staged}). */
    private final int stagedSlot;
    /**
     * The staged list. It is anchored in a short-lived object, replaced at every drain, rather
     * than in the long-lived slot arrays: with a generational collector such as G1, storing a
     * young timeout into an old object costs a card-marking barrier with a full fence, and the
     * staged list is written twice per schedule+cancel on the callers' fast path.
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
        this.stagedSlot = wheelSize + 1;
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
     * Appends {@code t}, whose {@code deadline} field holds its delay, to the staged list; the
     * owner must call {@link #drainStaged} within about a tick.
     */
    void stage(WheelTimeout t) {
        StagedList list = staged;
        WheelTimeout tail = list.tail;
        t.slot = stagedSlot;
        t.prev = tail;
        t.next = null;
        if (tail == null) {
            list.head = t;
        } else {
            tail.next = t;
        }
        list.tail = t;
        size++;
    }

    boolean hasStaged() {
        return staged.head != null;
    }

    /** Replaces an empty staged list's anchor so that it stays young (see {@link #staged}). */
    void renewStagedAnchor() {
        if (staged.head == null) {
            staged = new StagedList();
        }
    }

    boolean isStaged(WheelTimeout t) {
        return t.slot == stagedSlot;
    }

    /**
     * Gives every staged timeout the deadline {@code now + delay} and links it into its slot,
     * in staging order. {@code now} must have been read after the lock that guards this wheel
     * was taken, so that it is not earlier than any staged call.
     */
    void drainStaged(long now) {
        WheelTimeout t = staged.head;
        staged = new StagedList();
        while (t != null) {
            WheelTimeout next = t.next;
            t.next = null;
            t.prev = null;
            t.slot = WheelTimeout.UNLINKED;
            size--;
            t.deadline = ManualClock.saturatedAdd(now, t.deadline);
            add(t);
            t = next;
        }
    }

    /** Unlinks {@code t} if it is still in a slot; false if it was not (taken by a sweep or stop). */
    boolean remove(WheelTimeout t) {
        if (t.slot == WheelTimeout.UNLINKED) {
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
        return nextFireTime(Long.MAX_VALUE);
    }

    /**
     * Like {@link #nextFireTime()}, but the caller will pass again by {@code limit} anyway, so
     * the scan stops at the tick holding {@code limit} and returns at most {@code limit}; a
     * ticking worker then visits one or two slots per pass instead of a revolution.
     */
    long nextFireTime(long limit) {
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
                    return tickEnd;
                }
                earliest = Math.min(earliest, min);
            }
            if (tickEnd >= limit) {
                return limit;
            }
        }
        return earliest == Long.MAX_VALUE ? Long.MAX_VALUE : boundary(ceilTick(earliest));
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
        drainStaged(now);
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
        if (slot == stagedSlot) {
            unlinkStaged(t);
            return;
        }
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

    private void unlinkStaged(WheelTimeout t) {
        StagedList list = staged;
        WheelTimeout prev = t.prev;
        WheelTimeout next = t.next;
        if (prev == null) {
            list.head = next;
        } else {
            prev.next = next;
        }
        if (next == null) {
            list.tail = prev;
        } else {
            next.prev = prev;
        }
        t.prev = null;
        t.next = null;
        t.slot = WheelTimeout.UNLINKED;
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

    /** Head and tail of the staged list; see {@link WheelBuckets#staged}. */
    private static final class StagedList {
        WheelTimeout head;
        WheelTimeout tail;
    }
}
