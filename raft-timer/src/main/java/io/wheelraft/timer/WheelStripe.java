package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One stripe of a {@link HashedWheelTimer}: a bucket array and the small lock guarding it.
 * Each scheduling thread maps to one stripe, so threads scheduling and cancelling at the same
 * time do not fight over one lock; the worker visits every stripe once per pass.
 *
 * <p>The lock is a test-and-set word released with a plain release store (one atomic
 * instruction per lock/unlock pair). Critical sections are a handful of pointer writes (the
 * worker's are longer but rare), so waiters spin briefly and then yield.
 */
final class WheelStripe {

    private static final VarHandle LOCK;

    static {
        try {
            LOCK = MethodHandles.lookup().findVarHandle(WheelStripe.class, "lock", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final HashedWheelTimer timer;
    /** Guarded by the lock. */
    final WheelBuckets wheel;
    /**
     * Guarded by the lock; written only by the worker. True while the worker is ticking and
     * promises to drain this stripe's staged list within about a tick, so callers may stage
     * (skip the clock read); false while it may park for long, so callers link directly.
     */
    boolean staging;
    /** Guarded by the lock: timeouts staged since the worker last looked (keeps it ticking). */
    int stagedSinceLook;
    /** Guarded by the lock: timeouts linked directly since the worker last looked. */
    int directSinceLook;

    // Padding keeps the lock word of one stripe off the cache line of its neighbours' locks.
    @SuppressWarnings("unused")
    private long p0, p1, p2, p3, p4, p5, p6;
    @SuppressWarnings("unused") // accessed through LOCK
    private volatile int lock;
    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6;

    WheelStripe(HashedWheelTimer timer, long tickNanos, int wheelSize) {
        this.timer = timer;
        this.wheel = new WheelBuckets(tickNanos, wheelSize);
    }

    /**
     * The calling thread's stripe index (before masking): its thread id. Ids are handed out in
     * sequence, so threads started together (a pool, the benchmark's threads) land on
     * different stripes. A round-robin index kept in a ThreadLocal spread arbitrary threads
     * better, but its lookup cost about 5 ns per schedule, a fifth of the whole operation.
     */
    static int threadIndex() {
        return (int) Thread.currentThread().getId();
    }

    void lock() {
        if (!LOCK.compareAndSet(this, 0, 1)) {
            lockContended();
        }
    }

    void unlock() {
        LOCK.setRelease(this, 0);
    }

    private void lockContended() {
        int spins = 0;
        while ((int) LOCK.getOpaque(this) != 0 || !LOCK.compareAndSet(this, 0, 1)) {
            if (++spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }
}
