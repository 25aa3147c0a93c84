package io.wheelraft.timer;

import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One level of a {@link HierarchicalWheelTimer} (Kafka's {@code TimingWheel} design): a ring
 * of {@code wheelSize} buckets of {@code tickNanos} each, and a lazily created overflow level
 * whose tick is this level's whole interval.
 *
 * <p>Level 0 files a deadline {@code d} under the tick that ends at or after it, so nothing
 * fires early. Coarser levels file it under the tick that contains it and are flushed at that
 * tick's start, so their timeouts cascade to a finer level before they are due.
 *
 * <p>Thread-safety: {@link #add} may run concurrently from many threads under the timer's read
 * lock; {@link #advanceClock} runs under its write lock. {@code currentTime} is only written
 * under the write lock, so readers under the read lock see a stable value.
 */
final class TimingWheel {

    private final int level;
    private final long tickNanos;
    private final int wheelSize;
    private final long interval;
    private final TimerBucket[] buckets;
    private final Queue<TimerBucket> queue;
    private final AtomicLong counter;
    private final LongSupplier relativeNow;
    private long currentTime;
    private volatile TimingWheel overflow;

    TimingWheel(int level, long tickNanos, int wheelSize, long startTime, Queue<TimerBucket> queue,
            AtomicLong counter, LongSupplier relativeNow) {
        this.level = level;
        this.tickNanos = tickNanos;
        this.wheelSize = wheelSize;
        this.interval = tickNanos > Long.MAX_VALUE / wheelSize ? Long.MAX_VALUE : tickNanos * wheelSize;
        this.queue = queue;
        this.counter = counter;
        this.relativeNow = relativeNow;
        this.currentTime = startTime - Math.floorMod(startTime, tickNanos);
        this.buckets = new TimerBucket[wheelSize];
        for (int i = 0; i < wheelSize; i++) {
            buckets[i] = new TimerBucket(level, counter, relativeNow);
        }
    }

    long currentTime() {
        return currentTime;
    }

    /** Files {@code t} in this level or a coarser one. */
    void add(BucketTimeout t) {
        long d = t.deadline;
        if (d > ManualClock.saturatedAdd(currentTime, interval)) {
            overflowWheel().add(t);
            return;
        }
        long id;
        long expiration;
        if (level == 0) {
            // End of the tick holding d, but never a tick already processed: late timeouts fire next.
            id = Math.max(ceilDiv(d, tickNanos), currentTime / tickNanos + 1);
            expiration = id * tickNanos;
        } else {
            id = Math.floorDiv(d - 1, tickNanos);
            expiration = id * tickNanos;
        }
        TimerBucket bucket = buckets[(int) Math.floorMod(id, (long) wheelSize)];
        bucket.add(t);
        if (bucket.setExpiration(expiration)) {
            queue.offer(bucket);
        }
    }

    /** Moves this level (and the coarser ones) to the tick containing {@code time}. */
    void advanceClock(long time) {
        if (time >= ManualClock.saturatedAdd(currentTime, tickNanos)) {
            currentTime = time - Math.floorMod(time, tickNanos);
            TimingWheel o = overflow;
            if (o != null) {
                o.advanceClock(currentTime);
            }
        }
    }

    /**
     * Level 0 only: takes the timeouts due by {@code now} that sit in buckets not yet due: the
     * bucket of the partial tick holding {@code now}, and the next-tick bucket where timeouts
     * scheduled with past deadlines are filed.
     */
    void flushDueInTick(long now, Consumer<BucketTimeout> sink) {
        long partial = ceilDiv(now, tickNanos);
        long late = currentTime / tickNanos + 1;
        flushDueIn(partial, now, sink);
        if (late != partial) {
            flushDueIn(late, now, sink);
        }
    }

    /** Level 0 only: true if the bucket receiving past-deadline timeouts is non-empty. */
    boolean mayHoldLateTimeouts() {
        long id = currentTime / tickNanos + 1;
        return buckets[(int) Math.floorMod(id, (long) wheelSize)].expiration() == id * tickNanos;
    }

    private void flushDueIn(long id, long now, Consumer<BucketTimeout> sink) {
        TimerBucket bucket = buckets[(int) Math.floorMod(id, (long) wheelSize)];
        if (bucket.expiration() == id * tickNanos) {
            bucket.flushDue(now, sink);
        }
    }

    /** Calls {@code sink} for every pending timeout of this level and the coarser ones. */
    void forEachPending(Consumer<BucketTimeout> sink) {
        for (TimerBucket b : buckets) {
            b.forEachPending(sink);
        }
        TimingWheel o = overflow;
        if (o != null) {
            o.forEachPending(sink);
        }
    }

    int levels() {
        TimingWheel o = overflow;
        return 1 + (o == null ? 0 : o.levels());
    }

    private TimingWheel overflowWheel() {
        TimingWheel o = overflow;
        if (o == null) {
            synchronized (this) {
                o = overflow;
                if (o == null) {
                    o = new TimingWheel(level + 1, interval, wheelSize, currentTime, queue, counter, relativeNow);
                    overflow = o;
                }
            }
        }
        return o;
    }

    private static long ceilDiv(long a, long b) {
        long q = Math.floorDiv(a, b);
        return q * b == a ? q : q + 1;
    }
}
