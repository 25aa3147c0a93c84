package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link Timeout} of a {@link HashedWheelTimer}, doubling as the node of its bucket's
 * doubly linked list (or of its stripe's staged list, which is just another slot). Its links change only under its stripe's lock. While it is linked only a
 * lock holder can take it, so a cancel then needs no CAS of its own; once the worker has taken
 * it off the wheel, the runner and a late cancel race with a CAS, so exactly one of "expired"
 * (runs) or "cancelled" wins.
 */
final class WheelTimeout implements Timeout {

    static final int ST_PENDING = 0;
    static final int ST_CANCELLED = 1;
    static final int ST_EXPIRED = 2;

    /** Slot value while the timeout is in no bucket. */
    static final int UNLINKED = -1;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WheelTimeout.class, "state", int.class);
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

    // Guarded by the stripe's lock.
    WheelTimeout next;
    WheelTimeout prev;
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

    @Override
    public boolean cancel() {
        if ((int) STATE.getAcquire(this) != ST_PENDING) {
            return false; // cheap answer without the lock; the state never returns to pending
        }
        boolean linked;
        stripe.lock();
        try {
            // While linked, only a holder of the stripe lock can take it, so a plain store wins.
            linked = slot != UNLINKED;
            if (linked) {
                STATE.setRelease(this, ST_CANCELLED);
                stripe.wheel.remove(this);
            }
        } finally {
            stripe.unlock();
        }
        if (linked) {
            stripe.timer.releasePending(1);
            return true;
        }
        // Already taken off the wheel to run (or by stop): race the runner for it.
        return STATE.compareAndSet(this, ST_PENDING, ST_CANCELLED);
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
