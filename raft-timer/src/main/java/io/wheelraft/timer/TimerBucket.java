package io.wheelraft.timer;

import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One slot of one {@link TimingWheel} level: a doubly linked list of timeouts plus the time at
 * which the slot must be processed. Buckets with work sit in the timer's delay queue, ordered by
 * (expiration, level), so time jumps straight to the next non-empty bucket.
 *
 * <p>Thread-safety: the list is guarded by this object's monitor (adds and cancels come from
 * any thread); {@code expiration} is atomic. A bucket is re-queued only after a flush reset its
 * expiration, so its queue key never changes while it is queued.
 */
final class TimerBucket implements Delayed {

    private final int level;
    private final AtomicLong counter;
    private final LongSupplier relativeNow;
    private final AtomicLong expiration = new AtomicLong(-1L);
    private BucketTimeout head;
    private BucketTimeout tail;

    TimerBucket(int level, AtomicLong counter, LongSupplier relativeNow) {
        this.level = level;
        this.counter = counter;
        this.relativeNow = relativeNow;
    }

    int level() {
        return level;
    }

    long expiration() {
        return expiration.get();
    }

    /** Sets the expiration; true if it changed, meaning the bucket must be (re-)queued. */
    boolean setExpiration(long newExpiration) {
        return expiration.getAndSet(newExpiration) != newExpiration;
    }

    void add(BucketTimeout t) {
        synchronized (this) {
            t.prev = tail;
            t.next = null;
            if (tail == null) {
                head = t;
            } else {
                tail.next = t;
            }
            tail = t;
            t.bucket = this;
            counter.incrementAndGet();
        }
        // A cancel that read bucket == null just before we linked would leave t here; undo it.
        if (t.isCancelled()) {
            remove(t);
        }
    }

    void remove(BucketTimeout t) {
        synchronized (this) {
            if (t.bucket != this) {
                return;
            }
            BucketTimeout p = t.prev;
            BucketTimeout n = t.next;
            if (p == null) {
                head = n;
            } else {
                p.next = n;
            }
            if (n == null) {
                tail = p;
            } else {
                n.prev = p;
            }
            t.prev = null;
            t.next = null;
            t.bucket = null;
            counter.decrementAndGet();
        }
    }

    /** Removes every timeout and hands each to {@code sink}; resets the expiration. */
    void flush(Consumer<BucketTimeout> sink) {
        BucketTimeout t;
        synchronized (this) {
            t = head;
            while (t != null) {
                t.bucket = null;
                counter.decrementAndGet();
                t = t.next;
            }
            t = head;
            head = null;
            tail = null;
            expiration.set(-1L);
        }
        while (t != null) {
            BucketTimeout next = t.next;
            t.prev = null;
            t.next = null;
            sink.accept(t);
            t = next;
        }
    }

    /** Removes the timeouts with {@code deadline <= now} and hands each to {@code sink}. */
    void flushDue(long now, Consumer<BucketTimeout> sink) {
        BucketTimeout t;
        synchronized (this) {
            t = head;
            BucketTimeout due = null;
            BucketTimeout dueTail = null;
            while (t != null) {
                BucketTimeout next = t.next;
                if (t.deadline <= now) {
                    remove(t);
                    if (dueTail == null) {
                        due = t;
                    } else {
                        dueTail.next = t;
                    }
                    dueTail = t;
                }
                t = next;
            }
            t = due;
        }
        while (t != null) {
            BucketTimeout next = t.next;
            t.next = null;
            sink.accept(t);
            t = next;
        }
    }

    /** Calls {@code sink} for each timeout still pending (used by stop). */
    synchronized void forEachPending(Consumer<BucketTimeout> sink) {
        for (BucketTimeout t = head; t != null; t = t.next) {
            if (t.isPending()) {
                sink.accept(t);
            }
        }
    }

    @Override
    public long getDelay(TimeUnit unit) {
        return unit.convert(expiration.get() - relativeNow.getAsLong(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
        TimerBucket o = (TimerBucket) other;
        int c = Long.compare(expiration.get(), o.expiration.get());
        return c != 0 ? c : Integer.compare(level, o.level);
    }
}
