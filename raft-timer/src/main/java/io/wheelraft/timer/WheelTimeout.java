package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link Timeout} of a {@link HashedWheelTimer}, doubling as the node of its bucket's
 * doubly linked list. The link fields belong to the timer's lock; the state is a CAS so that
 * exactly one of "expired" (runs) or "cancelled" wins.
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

    private final HashedWheelTimer timer;
    private final TimerTask task;
    /** Deadline in nanoseconds relative to the timer's start. */
    final long deadline;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    // Guarded by the timer's lock.
    WheelTimeout next;
    WheelTimeout prev;
    int slot = UNLINKED;

    WheelTimeout(HashedWheelTimer timer, TimerTask task, long deadline) {
        this.timer = timer;
        this.task = task;
        this.deadline = deadline;
    }

    @Override
    public Timer timer() {
        return timer;
    }

    @Override
    public TimerTask task() {
        return task;
    }

    @Override
    public boolean isExpired() {
        return (int) STATE.getVolatile(this) == ST_EXPIRED;
    }

    @Override
    public boolean isCancelled() {
        return (int) STATE.getVolatile(this) == ST_CANCELLED;
    }

    @Override
    public boolean cancel() {
        if (!STATE.compareAndSet(this, ST_PENDING, ST_CANCELLED)) {
            return false;
        }
        timer.unlinkCancelled(this);
        return true;
    }

    /** Claims the right to run; false if a cancel won. */
    boolean markExpired() {
        return STATE.compareAndSet(this, ST_PENDING, ST_EXPIRED);
    }

    boolean isPending() {
        return (int) STATE.getVolatile(this) == ST_PENDING;
    }

    @Override
    public String toString() {
        int s = (int) STATE.getVolatile(this);
        String st = s == ST_PENDING ? "pending" : s == ST_CANCELLED ? "cancelled" : "expired";
        return "WheelTimeout(deadline=" + deadline + "ns, " + st + ", task=" + task + ")";
    }
}
