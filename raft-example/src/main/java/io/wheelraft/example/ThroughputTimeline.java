package io.wheelraft.example;

import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * {@code bench --every-ms}: the load's outcomes per interval, one line each, so that what a fault
 * does to the writes (how long they stop, how long the recovery takes) shows next to the window's
 * single figure. Each line covers the time since the previous one:
 * {@code at 12.25 s: 6840 ops/s, 0 unknown, 0 failed} (seconds since the load started; unknown and
 * failed are counts within the interval).
 *
 * <p>Not thread-safe: one thread samples.
 */
final class ThroughputTimeline {

    private final LongSupplier acked;
    private final LongSupplier unknown;
    private final LongSupplier failed;
    private final long originNanos;
    private final Consumer<String> out;
    private long lastNanos;
    private long lastAcked;
    private long lastUnknown;
    private long lastFailed;

    ThroughputTimeline(LongSupplier acked, LongSupplier unknown, LongSupplier failed, long originNanos, Consumer<String> out) {
        this.acked = acked;
        this.unknown = unknown;
        this.failed = failed;
        this.originNanos = originNanos;
        this.out = out;
        this.lastNanos = originNanos;
        this.lastAcked = acked.getAsLong();
        this.lastUnknown = unknown.getAsLong();
        this.lastFailed = failed.getAsLong();
    }

    /** Writes the line for the interval that ends at {@code nowNanos}; nothing for an empty interval. */
    void sample(long nowNanos) {
        long elapsed = nowNanos - lastNanos;
        if (elapsed <= 0) {
            return;
        }
        long a = acked.getAsLong();
        long u = unknown.getAsLong();
        long f = failed.getAsLong();
        out.accept(String.format(Locale.ROOT, "at %.2f s: %.0f ops/s, %d unknown, %d failed",
                (nowNanos - originNanos) / 1e9, (a - lastAcked) * 1e9 / elapsed, u - lastUnknown, f - lastFailed));
        lastNanos = nowNanos;
        lastAcked = a;
        lastUnknown = u;
        lastFailed = f;
    }
}
