package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link Timeout} of a {@link HashedWheelTimer}, doubling as the node of its bucket's
 * doubly linked list (or of its stripe's singly linked staged or stamped list). Its links change
 * only under its stripe's lock. {@link #cancel()} and the runner race with a CAS on the state,
 * so exactly one of "expired" (runs) or "cancelled" wins.
 */
final class WheelTimeout implements Timeout {

    static final int ST_PENDING = 0;
    static final int ST_CANCELLED = 1;
    static final int ST_EXPIRED = 2;

    /** Slot value while the timeout is in no bucket and no list. */
    static final int UNLINKED = -1;
    /** Slot value while the timeout waits in its stripe's staged list ({@code deadline} holds the delay). */
    static final int STAGED = -2;
    /** Slot value while the timeout waits, stamped, in its stripe's stamped list for the worker to link it. */
    static final int STAMPED = -3;

    private static final VarHandle STATE;
    private static final VarHandle SLOT;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WheelTimeout.class, "state", int.class);
            SLOT = MethodHandles.lookup().findVarHandle(WheelTimeout.class, "slot", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final WheelStripe stripe;
    private final TimerTask task;
    /**
     * Deadline in nanoseconds relative to the timer's start; while the timeout is staged (handed
     * to the worker without a clock read, see {@link WheelBuckets#stage}) it holds the delay
     * instead, and the worker turns it into a deadline when it drains the staged list. Written
     * only under the stripe's lock (or before the timeout is published).
     */
    long deadline;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    // Written under the stripe's lock. A cancel reads slot without it (see cancel()).
    WheelTimeout next;
    WheelTimeout prev;
    /** The bucket index (>= 0), or UNLINKED, STAGED or STAMPED. */
    int slot = UNLINKED;

    WheelTimeout(WheelStripe stripe, TimerTask task) {
        this.stripe = stripe;
        this.task = task;
    }

    WheelStripe stripe() {
        return stripe;
    }

    @Override
    public Timer timer() {
        return stripe.timer;
    }

    @Override
    public TimerTask task() {
        return task;
    }

    @Override
    public boolean isExpired() {
        return (int) STATE.getAcquire(this) == ST_EXPIRED;
    }

    @Override
    public boolean isCancelled() {
        return (int) STATE.getAcquire(this) == ST_CANCELLED;
    }

    /**
     * Wins the race against the runner with a CAS, then makes sure the timeout is released
     * promptly. A timeout still waiting in a staged or stamped list (in the reset pattern, nearly
     * every cancelled one) is left there without taking the lock: the list's next stamp or drain,
     * at most half a tick or {@link HashedWheelTimer#STAMP_EVERY} schedules of this stripe away,
     * drops it without touching the wheel's slots. One linked into a slot is unlinked now, under
     * the lock. The linker writes {@code slot} and then, after a full fence, reads the state; we
     * write the state (CAS) and then read {@code slot}; so if we miss the link, the linker sees
     * the cancel and unlinks it itself (see {@code WheelBuckets.linkAll}).
     */
    @Override
    public boolean cancel() {
        if (!STATE.compareAndSet(this, ST_PENDING, ST_CANCELLED)) {
            return false;
        }
        if ((int) SLOT.getVolatile(this) >= 0) {
            boolean removed;
            stripe.lock();
            try {
                removed = stripe.wheel.remove(this);
            } finally {
                stripe.unlock();
            }
            if (removed) {
                stripe.timer.releasePending(1);
            }
        }
        // Otherwise it waits in a list (dropped, and released, by the next stamp or drain) or a
        // sweep or stop has already taken it off the wheel (released there).
        return true;
    }

    /** Claims the right to run; false if a cancel won. */
    boolean markExpired() {
        return STATE.compareAndSet(this, ST_PENDING, ST_EXPIRED);
    }

    boolean isPending() {
        return (int) STATE.getAcquire(this) == ST_PENDING;
    }

    @Override
    public String toString() {
        int s = (int) STATE.getVolatile(this);
        String st = s == ST_PENDING ? "pending" : s == ST_CANCELLED ? "cancelled" : "expired";
        return "WheelTimeout(deadline=" + deadline + "ns, " + st + ", task=" + task + ")";
    }
}
