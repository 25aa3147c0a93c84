package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link Timeout} of a {@link HierarchicalWheelTimer}, doubling as the node of the
 * {@link TimerBucket} list it sits in. It may move between buckets as it cascades to finer
 * wheels; {@link #bucket} says where it is now. The state is a CAS so that exactly one of
 * "expired" (runs) or "cancelled" wins.
 */
final class BucketTimeout implements Timeout {

    private static final int ST_PENDING = 0;
    private static final int ST_CANCELLED = 1;
    private static final int ST_EXPIRED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(BucketTimeout.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final HierarchicalWheelTimer timer;
    private final TimerTask task;
    /** Deadline in nanoseconds relative to the timer's start. */
    final long deadline;
    /** Scheduling order, to break deadline ties deterministically. */
    final long seq;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    /** The bucket holding this timeout, or null. Written under that bucket's monitor. */
    volatile TimerBucket bucket;
    // Guarded by the monitor of {@link #bucket}.
    BucketTimeout next;
    BucketTimeout prev;

    BucketTimeout(HierarchicalWheelTimer timer, TimerTask task, long deadline, long seq) {
        this.timer = timer;
        this.task = task;
        this.deadline = deadline;
        this.seq = seq;
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
        unlink();
        return true;
    }

    /** Removes this timeout from whatever bucket holds it, following it if it moves meanwhile. */
    void unlink() {
        TimerBucket b = bucket;
        while (b != null) {
            b.remove(this);
            b = bucket;
        }
    }

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
        return "BucketTimeout(deadline=" + deadline + "ns, " + st + ", task=" + task + ")";
    }
}
