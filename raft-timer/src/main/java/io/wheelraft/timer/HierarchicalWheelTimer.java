package io.wheelraft.timer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A hierarchical timing wheel (the design of Kafka's {@code TimingWheel} and
 * {@code SystemTimer}): level 0 has {@code wheelSize} ticks of {@code tickDuration}; each
 * coarser level, created on demand, has ticks as long as the whole level below. Buckets holding
 * timeouts sit in a delay queue ordered by expiration, so the worker sleeps straight through
 * empty ticks and wakes when the next bucket is due (or an earlier bucket is queued). Timeouts
 * in coarse buckets cascade to finer levels as their bucket comes due.
 *
 * <p>Compared with {@link HashedWheelTimer}, a timeout far in the future costs no per-revolution
 * re-visits, at the price of a delay-queue operation whenever a bucket becomes non-empty and a
 * few cascades per timeout. A timeout fires at the end of the level-0 tick holding its deadline:
 * never early, at most about one tick late.
 *
 * <p>Differences from Kafka: time in nanoseconds from a {@link Clock}; a thread of its own
 * waits on the queue (no external reaper calls); a task that throws is logged (Kafka's
 * executor drops the exception); built with {@link Builder#drivenBy(ManualClock)} no thread is
 * started and due timeouts fire on the thread advancing the clock.
 *
 * <p>Thread-safety: all methods may be called from any thread; adds run concurrently with each
 * other (read lock), only the worker's bucket processing takes the write lock. Tasks run after
 * the lock is released, in deadline order, on the worker (or the configured executor).
 * {@link #stop()} may not be called from one of this timer's tasks.
 */
public final class HierarchicalWheelTimer implements Timer {

    /** Deadlines are capped here (about 73 years) so that level arithmetic cannot overflow. */
    private static final long MAX_DEADLINE = Long.MAX_VALUE / 4;
    private static final Comparator<BucketTimeout> FIRING_ORDER =
            Comparator.<BucketTimeout>comparingLong(t -> t.deadline).thenComparingLong(t -> t.seq);
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final Clock clock;
    private final long startTime;
    private final long tickNanos;
    private final ThreadFactory threadFactory;
    private final TaskRunner runner;
    private final ManualDriver manualDriver;
    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong sequence = new AtomicLong();
    private final DelayQueue<TimerBucket> queue = new DelayQueue<>();
    private final TimerBucket poison;
    private final TimingWheel wheel;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Object startLock = new Object();
    private volatile Thread worker;
    private volatile boolean stopped;
    /** Buckets flushed so far; written under the write lock. */
    private volatile long bucketsProcessed;

    private HierarchicalWheelTimer(Builder b) {
        Objects.requireNonNull(b.clock, "clock");
        Objects.requireNonNull(b.tickUnit, "unit");
        Objects.requireNonNull(b.threadFactory, "threadFactory");
        if (b.tickDuration <= 0) {
            throw new IllegalArgumentException("tickDuration must be > 0: " + b.tickDuration + " " + b.tickUnit);
        }
        if (b.wheelSize < 2 || b.wheelSize > (1 << 20)) {
            throw new IllegalArgumentException("wheelSize must be in 2.." + (1 << 20) + ": " + b.wheelSize);
        }
        this.clock = b.clock;
        this.tickNanos = b.tickUnit.toNanos(b.tickDuration);
        this.threadFactory = b.threadFactory;
        this.runner = new TaskRunner(this, b.taskExecutor);
        this.startTime = clock.nanoTime();
        this.wheel = new TimingWheel(0, tickNanos, b.wheelSize, 0L, queue, pending, this::relativeNow);
        this.poison = new TimerBucket(-1, new AtomicLong(), () -> 0L);
        poison.setExpiration(Long.MIN_VALUE);
        if (b.manualClock != null) {
            manualDriver = new ManualDriver(b.manualClock);
            b.manualClock.subscribe(manualDriver);
        } else {
            manualDriver = null;
        }
    }

    /** Starts building a timer; every setting has a default. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        long delayNanos = Math.max(0L, unit.toNanos(delay));
        long deadline = Math.min(MAX_DEADLINE, ManualClock.saturatedAdd(relativeNow(), delayNanos));
        BucketTimeout timeout = new BucketTimeout(this, task, deadline, sequence.getAndIncrement());
        ReentrantReadWriteLock.ReadLock read = lock.readLock();
        read.lock();
        try {
            if (stopped) {
                throw new IllegalStateException("cannot schedule " + task + ": the timer is stopped");
            }
            wheel.add(timeout);
        } finally {
            read.unlock();
        }
        if (manualDriver == null && worker == null) {
            startWorker();
        }
        return timeout;
    }

    /** The clock this timer was built with ({@link Builder#clock} or {@link Builder#drivenBy}). */
    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == worker || TaskRunner.isRunningTaskOf(this)) {
            throw new IllegalStateException(
                    "HierarchicalWheelTimer.stop() cannot be called from a TimerTask of the same timer");
        }
        Set<Timeout> unprocessed = new LinkedHashSet<>();
        ReentrantReadWriteLock.WriteLock write = lock.writeLock();
        write.lock();
        try {
            if (stopped) {
                return Collections.emptySet();
            }
            stopped = true;
            List<BucketTimeout> left = new ArrayList<>();
            wheel.forEachPending(left::add);
            left.sort(FIRING_ORDER);
            for (BucketTimeout t : left) {
                t.unlink();
                unprocessed.add(t);
            }
            queue.clear();
        } finally {
            write.unlock();
        }
        if (manualDriver != null) {
            manualDriver.clock.unsubscribe(manualDriver);
        }
        Thread w;
        synchronized (startLock) {
            w = worker;
        }
        if (w != null) {
            queue.offer(poison);
            boolean interrupted = false;
            while (w.isAlive()) {
                try {
                    w.join(100);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return Collections.unmodifiableSet(unprocessed);
    }

    /** The number of timeouts in the wheel (neither expired nor cancelled). */
    public long pendingTimeouts() {
        return pending.get();
    }

    /** How many levels the wheel has grown to (for tests and diagnostics). */
    int levels() {
        return wheel.levels();
    }

    /** How many buckets have been processed (for tests: time jumps over empty ticks). */
    long bucketsProcessed() {
        return bucketsProcessed;
    }

    private long relativeNow() {
        return clock.nanoTime() - startTime;
    }

    private void startWorker() {
        synchronized (startLock) {
            if (worker != null || stopped) {
                return;
            }
            Thread t = threadFactory.newThread(this::workerLoop);
            if (t == null) {
                throw new IllegalStateException("threadFactory " + threadFactory + " returned no thread");
            }
            worker = t;
            t.start();
        }
    }

    private void workerLoop() {
        List<BucketTimeout> due = new ArrayList<>();
        while (!stopped) {
            TimerBucket first;
            try {
                first = queue.take(); // parks until the earliest bucket is due
            } catch (InterruptedException e) {
                continue; // only stop() ends the worker
            }
            if (first == poison) {
                continue;
            }
            ReentrantReadWriteLock.WriteLock write = lock.writeLock();
            write.lock();
            try {
                if (stopped) {
                    return;
                }
                // Put it back and drain in queue order: a bucket added between take() and
                // the lock may be due at the same instant on a finer level, and must go first.
                queue.offer(first);
                drainDueBuckets(due);
            } finally {
                write.unlock();
            }
            runAll(due);
        }
    }

    /** Caller holds the write lock. Processes every due bucket, collecting due timeouts. */
    private void drainDueBuckets(List<BucketTimeout> due) {
        TimerBucket b;
        while ((b = queue.poll()) != null) {
            if (b == poison) {
                continue;
            }
            bucketsProcessed++;
            wheel.advanceClock(b.expiration());
            b.flush(t -> {
                if (!t.isPending()) {
                    return; // cancelled: dropped here, its cancel already saw it unlinked
                }
                if (t.deadline <= wheel.currentTime()) {
                    due.add(t);
                } else {
                    wheel.add(t); // cascade to a finer level
                }
            });
        }
    }

    private void runAll(List<BucketTimeout> due) {
        if (due.size() > 1) {
            due.sort(FIRING_ORDER);
        }
        for (int i = 0, n = due.size(); i < n; i++) {
            BucketTimeout t = due.get(i);
            if (t.markExpired()) {
                runner.submit(t);
            }
        }
        due.clear();
    }

    @Override
    public String toString() {
        return "HierarchicalWheelTimer(tick=" + tickNanos + "ns, pending=" + pending.get()
                + (stopped ? ", stopped" : "") + ")";
    }

    /** Fires this timer from {@link ManualClock#advance} instead of a worker thread. */
    private final class ManualDriver implements ManualClock.Subscriber {
        final ManualClock clock;
        private final List<BucketTimeout> due = new ArrayList<>();

        ManualDriver(ManualClock clock) {
            this.clock = clock;
        }

        @Override
        public long nextFireTime() {
            TimerBucket head = queue.peek();
            return head == null ? Long.MAX_VALUE : ManualClock.saturatedAdd(startTime, head.expiration());
        }

        @Override
        public long earliestDeadline() {
            ReentrantReadWriteLock.ReadLock read = lock.readLock();
            read.lock();
            try {
                if (wheel.mayHoldLateTimeouts()) {
                    return Long.MIN_VALUE; // past deadlines filed at the next tick: check them
                }
            } finally {
                read.unlock();
            }
            TimerBucket head = queue.peek();
            if (head == null) {
                return Long.MAX_VALUE;
            }
            // Other level-0 buckets hold deadlines within the tick ending at their expiration;
            // coarser buckets only deadlines after it. Either way this is a lower bound.
            return ManualClock.saturatedAdd(startTime, head.expiration() - tickNanos + 1);
        }

        @Override
        public boolean fire(long now) {
            long rel = now - startTime;
            ReentrantReadWriteLock.WriteLock write = lock.writeLock();
            write.lock();
            try {
                if (stopped) {
                    return false;
                }
                drainDueBuckets(due);
                wheel.flushDueInTick(rel, t -> {
                    if (t.isPending()) {
                        due.add(t);
                    }
                });
            } finally {
                write.unlock();
            }
            boolean any = !due.isEmpty();
            runAll(due);
            return any;
        }
    }

    /**
     * Builds a {@link HierarchicalWheelTimer}. Defaults: 1 ms tick, 64 buckets per level, the
     * system clock, tasks run on the worker thread, a daemon worker thread. Not thread-safe.
     */
    public static final class Builder {
        private long tickDuration = 1;
        private TimeUnit tickUnit = TimeUnit.MILLISECONDS;
        private int wheelSize = 64;
        private Clock clock = Clock.system();
        private Executor taskExecutor;
        private ThreadFactory threadFactory = r -> {
            Thread t = new Thread(r, "wheelraft-hierarchical-timer-" + THREAD_IDS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        private ManualClock manualClock;

        private Builder() {
        }

        /** The level-0 tick: timeouts fire at most about this late. */
        public Builder tickDuration(long tickDuration, TimeUnit unit) {
            this.tickDuration = tickDuration;
            this.tickUnit = unit;
            return this;
        }

        /** Buckets per level (2..2^20). */
        public Builder wheelSize(int wheelSize) {
            this.wheelSize = wheelSize;
            return this;
        }

        /**
         * The time source the worker thread reads (default {@link Clock#system()}). Replaces an
         * earlier {@link #drivenBy}. For a timer fired by a {@link ManualClock}, use {@link #drivenBy}.
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            this.manualClock = null;
            return this;
        }

        /**
         * No worker thread: {@code clock} is the time source, and its {@link ManualClock#advance}
         * fires this timer's due timeouts on the advancing thread, deterministically. Replaces an
         * earlier {@link #clock}.
         */
        public Builder drivenBy(ManualClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            this.manualClock = clock;
            return this;
        }

        /** Where expired tasks run; null (the default) runs them on the firing thread. */
        public Builder taskExecutor(Executor taskExecutor) {
            this.taskExecutor = taskExecutor;
            return this;
        }

        /** Creates the worker thread (unused when {@link #drivenBy driven by} a manual clock). */
        public Builder threadFactory(ThreadFactory threadFactory) {
            this.threadFactory = threadFactory;
            return this;
        }

        /** Builds the timer; its worker starts with the first timeout. */
        public HierarchicalWheelTimer build() {
            return new HierarchicalWheelTimer(this);
        }
    }
}
