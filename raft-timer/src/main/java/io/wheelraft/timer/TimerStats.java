package io.wheelraft.timer;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * What a {@link HashedWheelTimer} has done, for monitoring (the counter exports it to
 * Prometheus): timeouts pending, timeouts fired, and how late they fired (the time between a
 * timeout's deadline and the pass of the wheel that expired it; a stalled worker, e.g. in a GC
 * pause or a starved CPU, shows here before it shows as elections).
 *
 * <p>Thread-safe and cheap: the firing thread adds to plain atomics (it is their only writer,
 * apart from the reset of the window maximum), readers read them.
 */
public final class TimerStats {

    private final LongSupplier pending;
    private final AtomicLong fired = new AtomicLong();
    private final AtomicLong latenessTotalNanos = new AtomicLong();
    private final AtomicLong latenessMaxNanos = new AtomicLong();

    TimerStats(LongSupplier pending) {
        this.pending = pending;
    }

    /** The firing thread: one timeout expired {@code latenessNanos} after its deadline. */
    void recordFired(long latenessNanos) {
        long late = Math.max(0, latenessNanos);
        fired.lazySet(fired.get() + 1);
        latenessTotalNanos.lazySet(latenessTotalNanos.get() + late);
        if (late > latenessMaxNanos.get()) {
            latenessMaxNanos.accumulateAndGet(late, Math::max);
        }
    }

    /** Timeouts scheduled that have neither fired nor been cancelled (takes each stripe's lock briefly). */
    public long pendingTimeouts() {
        return pending.getAsLong();
    }

    /** Timeouts fired since the timer was created. */
    public long firedTimeouts() {
        return fired.get();
    }

    /** The sum of every fired timeout's lateness, in nanoseconds (divide by {@link #firedTimeouts} for the mean). */
    public long totalLatenessNanos() {
        return latenessTotalNanos.get();
    }

    /**
     * The largest lateness of a timeout fired since the previous call, in nanoseconds, and starts
     * a new window. Meant for one periodic reader (a metrics scrape).
     */
    public long takeMaxLatenessNanos() {
        return latenessMaxNanos.getAndSet(0);
    }
}
