package io.wheelraft.example;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * What a closed-loop load measured in one fixed window {@code [from, until]} (System.nanoTime),
 * counted the way raft-bench's {@code ClosedLoopLoad} counts, so {@code bench} and the side-by-side
 * benchmark report the same figures: an increment acknowledged inside the window counts towards
 * ops/s (however early it started), and its latency is kept only if it also started inside the
 * window; throughput is the count over the window's nominal length. Both bounds are fixed before
 * the window opens, so nothing acknowledged after it (while the driver wakes up) slips in.
 *
 * <p>Threading: {@link #acknowledged} for one slot is called by one increment at a time (each
 * slot's increments follow each other), so each slot's counters need no lock; read the results
 * after the load has stopped (which waits for every slot).
 */
final class MeasuredWindow {

    private final long fromNanos;
    private final long untilNanos;
    private final boolean keepLatencies;
    private final long[] acks;
    private final long[][] latencies;
    private final int[] latencyCounts;

    MeasuredWindow(int slots, long fromNanos, long untilNanos, boolean keepLatencies) {
        if (slots <= 0 || untilNanos - fromNanos <= 0) {
            throw new IllegalArgumentException("a window needs slots and a positive length, was " + slots + " slots, "
                    + (untilNanos - fromNanos) + " ns");
        }
        this.fromNanos = fromNanos;
        this.untilNanos = untilNanos;
        this.keepLatencies = keepLatencies;
        this.acks = new long[slots];
        this.latencies = new long[slots][];
        this.latencyCounts = new int[slots];
        for (int i = 0; i < slots; i++) {
            latencies[i] = new long[keepLatencies ? 1024 : 0];
        }
    }

    long fromNanos() {
        return fromNanos;
    }

    long untilNanos() {
        return untilNanos;
    }

    /** The window's length in seconds: what the acknowledged count is divided by. */
    double seconds() {
        return (untilNanos - fromNanos) / (double) TimeUnit.SECONDS.toNanos(1);
    }

    /** Slot {@code slot}'s increment, started at {@code startNanos}, was acknowledged at {@code endNanos}. */
    void acknowledged(int slot, long startNanos, long endNanos) {
        if (endNanos - fromNanos < 0 || endNanos - untilNanos > 0) {
            return; // warm-up, or after the window
        }
        acks[slot]++;
        if (keepLatencies && startNanos - fromNanos >= 0) {
            long[] a = latencies[slot];
            int n = latencyCounts[slot];
            if (n == a.length) {
                a = Arrays.copyOf(a, Math.max(16, a.length * 2));
                latencies[slot] = a;
            }
            a[n] = endNanos - startNanos;
            latencyCounts[slot] = n + 1;
        }
    }

    /** Increments acknowledged inside the window. */
    long acknowledged() {
        long total = 0;
        for (long a : acks) {
            total += a;
        }
        return total;
    }

    /** Acknowledged increments per second of the window. */
    double opsPerSecond() {
        return acknowledged() / seconds();
    }

    /** Latencies (ns) of the increments that started and ended inside the window, sorted. */
    long[] sortedLatencies() {
        int total = 0;
        for (int n : latencyCounts) {
            total += n;
        }
        long[] all = new long[total];
        int pos = 0;
        for (int i = 0; i < latencies.length; i++) {
            System.arraycopy(latencies[i], 0, all, pos, latencyCounts[i]);
            pos += latencyCounts[i];
        }
        Arrays.sort(all);
        return all;
    }
}
