package io.wheelraft.timer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A round-based hashed timing wheel (the design of Netty's {@code HashedWheelTimer}) that does
 * not burn CPU when idle.
 *
 * <p>Time is cut into ticks of {@code tickDuration}; a timeout fires at the end of the tick
 * holding its deadline, so it runs at most about one tick late and never early. The wheel has
 * {@code ticksPerWheel} slots (rounded up to a power of two); deadlines further out than one
 * revolution share slots with nearer ones and are told apart by their deadline.
 *
 * <p>Differences from Netty:
 * <ul>
 *   <li>The worker thread parks until the end of the earliest tick that holds a pending
 *       timeout, instead of waking every tick; scheduling an earlier timeout wakes it.</li>
 *   <li>{@link Timeout#cancel()} unlinks the timeout at once (O(1) under a short lock), so a
 *       cancelled timeout and its task are released promptly.</li>
 *   <li>With a {@link ManualClock} no thread is started: the clock's {@code advance} fires due
 *       timeouts on the calling thread, deterministically.</li>
 *   <li>Expired tasks may run on a given {@link Executor}; a throwing task is logged.</li>
 * </ul>
 *
 * <p>Thread-safety: all methods may be called from any thread. The worker (or the thread
 * advancing a manual clock) runs tasks in deadline order, ties in scheduling order, unless an
 * executor was configured. {@link #stop()} may not be called from one of this timer's tasks.
 */
public final class HashedWheelTimer implements Timer {

    static final long DEFAULT_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final int DEFAULT_TICKS_PER_WHEEL = 2048;
    private static final int MAX_TICKS_PER_WHEEL = 1 << 30;
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final Clock clock;
    private final long startTime;
    private final long tickNanos;
    private final long maxPendingTimeouts;
    private final ThreadFactory threadFactory;
    private final TaskRunner runner;
    private final ManualDriver manualDriver;

    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final WheelBuckets wheel;
    /** Guarded by {@link #lock}. */
    private Thread worker;
    private volatile boolean stopped;
    /** Relative time the worker is parked until; lowered (under the lock) by earlier adds. */
    private volatile long wakeAt = Long.MAX_VALUE;

    /** A timer with a 1 ms tick and 2048 ticks per wheel, on the system clock. */
    public HashedWheelTimer() {
        this(DEFAULT_TICK_NANOS, TimeUnit.NANOSECONDS, DEFAULT_TICKS_PER_WHEEL);
    }

    /** A timer with the given tick and wheel size, on the system clock. */
    public HashedWheelTimer(long tickDuration, TimeUnit unit, int ticksPerWheel) {
        this(defaultThreadFactory(), tickDuration, unit, ticksPerWheel);
    }

    /** A timer whose worker thread comes from {@code threadFactory}. */
    public HashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel) {
        this(builder().threadFactory(threadFactory).tickDuration(tickDuration, unit).ticksPerWheel(ticksPerWheel));
    }

    private HashedWheelTimer(Builder b) {
        Objects.requireNonNull(b.threadFactory, "threadFactory");
        Objects.requireNonNull(b.clock, "clock");
        Objects.requireNonNull(b.tickUnit, "unit");
        if (b.tickDuration <= 0) {
            throw new IllegalArgumentException("tickDuration must be > 0: " + b.tickDuration + " " + b.tickUnit);
        }
        if (b.ticksPerWheel <= 0 || b.ticksPerWheel > MAX_TICKS_PER_WHEEL) {
            throw new IllegalArgumentException(
                    "ticksPerWheel must be in 1.." + MAX_TICKS_PER_WHEEL + ": " + b.ticksPerWheel);
        }
        int wheelSize = normalizeTicksPerWheel(b.ticksPerWheel);
        long tick = b.tickUnit.toNanos(b.tickDuration);
        if (tick >= Long.MAX_VALUE / wheelSize) {
            throw new IllegalArgumentException(String.format(
                    "tickDuration × ticksPerWheel overflows a long: %d %s × %d (must be < %d ns)",
                    b.tickDuration, b.tickUnit, wheelSize, Long.MAX_VALUE));
        }
        this.clock = b.clock;
        this.tickNanos = tick;
        this.maxPendingTimeouts = b.maxPendingTimeouts;
        this.threadFactory = b.threadFactory;
        this.runner = new TaskRunner(this, b.taskExecutor);
        this.wheel = new WheelBuckets(tick, wheelSize);
        this.startTime = clock.nanoTime();
        if (clock instanceof ManualClock manual) {
            this.manualDriver = new ManualDriver(manual);
            manual.subscribe(manualDriver);
        } else {
            this.manualDriver = null;
        }
    }

    /** Starts building a timer; every setting has a default. */
    public static Builder builder() {
        return new Builder();
    }

    /** The smallest power of two >= {@code ticksPerWheel} (which is at most 2^30). */
    static int normalizeTicksPerWheel(int ticksPerWheel) {
        return ticksPerWheel <= 1 ? 1 : Integer.highestOneBit(ticksPerWheel - 1) << 1;
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        long delayNanos = Math.max(0L, unit.toNanos(delay));
        long deadline = ManualClock.saturatedAdd(clock.nanoTime() - startTime, delayNanos);
        WheelTimeout timeout = new WheelTimeout(this, task, deadline);
        Thread toWake = null;
        lock.lock();
        try {
            if (stopped) {
                throw new IllegalStateException("cannot schedule " + task + ": the timer is stopped");
            }
            long pending = wheel.size();
            if (maxPendingTimeouts > 0 && pending >= maxPendingTimeouts) {
                throw new RejectedExecutionException("Number of pending timeouts (" + (pending + 1)
                        + ") would exceed maxPendingTimeouts (" + maxPendingTimeouts + ")");
            }
            long fireAt = wheel.add(timeout);
            if (manualDriver == null) {
                if (worker == null) {
                    worker = startWorker();
                }
                if (fireAt < wakeAt) {
                    wakeAt = fireAt;
                    toWake = worker;
                }
            }
        } finally {
            lock.unlock();
        }
        if (toWake != null) {
            LockSupport.unpark(toWake);
        }
        return timeout;
    }

    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == workerThread() || TaskRunner.isRunningTaskOf(this)) {
            throw new IllegalStateException(
                    "HashedWheelTimer.stop() cannot be called from a TimerTask of the same timer");
        }
        Set<Timeout> unprocessed = new LinkedHashSet<>();
        Thread w;
        lock.lock();
        try {
            if (stopped) {
                return Collections.emptySet();
            }
            stopped = true;
            wheel.drainPending(unprocessed);
            w = worker;
        } finally {
            lock.unlock();
        }
        if (manualDriver != null) {
            manualDriver.clock.unsubscribe(manualDriver);
        }
        if (w != null) {
            joinWorker(w);
        }
        return Collections.unmodifiableSet(unprocessed);
    }

    /** The number of timeouts scheduled that have neither expired nor been cancelled. */
    public long pendingTimeouts() {
        lock.lock();
        try {
            return wheel.size();
        } finally {
            lock.unlock();
        }
    }

    /** The tick length in nanoseconds. */
    public long tickNanos() {
        return tickNanos;
    }

    void unlinkCancelled(WheelTimeout timeout) {
        lock.lock();
        try {
            wheel.remove(timeout);
        } finally {
            lock.unlock();
        }
    }

    private Thread workerThread() {
        lock.lock();
        try {
            return worker;
        } finally {
            lock.unlock();
        }
    }

    private Thread startWorker() {
        Thread t = threadFactory.newThread(this::workerLoop);
        if (t == null) {
            throw new IllegalStateException("threadFactory " + threadFactory + " returned no thread");
        }
        t.start();
        return t;
    }

    private void joinWorker(Thread w) {
        boolean interrupted = false;
        LockSupport.unpark(w);
        while (w.isAlive()) {
            try {
                w.join(100);
            } catch (InterruptedException e) {
                interrupted = true;
            }
            LockSupport.unpark(w);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void workerLoop() {
        List<WheelTimeout> due = new ArrayList<>();
        while (true) {
            lock.lock();
            try {
                if (stopped) {
                    return;
                }
                wheel.expire(clock.nanoTime() - startTime, due);
                wakeAt = wheel.nextFireTime();
            } finally {
                lock.unlock();
            }
            runAll(due);
            parkUntilDue();
        }
    }

    /** Parks until {@link #wakeAt}; an add of an earlier timeout lowers it and unparks us. */
    private void parkUntilDue() {
        while (!stopped) {
            long waitNanos = wakeAt - (clock.nanoTime() - startTime);
            if (waitNanos <= 0) {
                return;
            }
            LockSupport.parkNanos(this, waitNanos);
            // Interrupts do not stop the timer (stop() does); clear them so parking keeps working.
            Thread.interrupted();
        }
    }

    private void runAll(List<WheelTimeout> due) {
        for (int i = 0, n = due.size(); i < n; i++) {
            WheelTimeout t = due.get(i);
            if (t.markExpired()) {
                runner.submit(t);
            }
        }
        due.clear();
    }

    private static ThreadFactory defaultThreadFactory() {
        return r -> {
            Thread t = new Thread(r, "wheelraft-hashed-wheel-timer-" + THREAD_IDS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String toString() {
        return "HashedWheelTimer(tick=" + tickNanos + "ns, pending=" + pendingTimeouts()
                + (stopped ? ", stopped" : "") + ")";
    }

    /** Fires this timer from {@link ManualClock#advance} instead of a worker thread. */
    private final class ManualDriver implements ManualClock.Subscriber {
        final ManualClock clock;
        private final List<WheelTimeout> due = new ArrayList<>();

        ManualDriver(ManualClock clock) {
            this.clock = clock;
        }

        @Override
        public long nextFireTime() {
            lock.lock();
            try {
                long rel = wheel.nextFireTime();
                return rel == Long.MAX_VALUE ? Long.MAX_VALUE : ManualClock.saturatedAdd(startTime, rel);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public long earliestDeadline() {
            lock.lock();
            try {
                long rel = wheel.earliestDeadline();
                return rel == Long.MAX_VALUE ? Long.MAX_VALUE : ManualClock.saturatedAdd(startTime, rel);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public boolean fire(long now) {
            lock.lock();
            try {
                if (stopped) {
                    return false;
                }
                wheel.expire(now - startTime, due);
            } finally {
                lock.unlock();
            }
            boolean any = !due.isEmpty();
            runAll(due);
            return any;
        }
    }

    /**
     * Builds a {@link HashedWheelTimer}. Defaults: 1 ms tick, 2048 ticks per wheel, the system
     * clock, tasks run on the worker thread, no pending limit, daemon worker threads.
     * Not thread-safe.
     */
    public static final class Builder {
        private long tickDuration = DEFAULT_TICK_NANOS;
        private TimeUnit tickUnit = TimeUnit.NANOSECONDS;
        private int ticksPerWheel = DEFAULT_TICKS_PER_WHEEL;
        private Clock clock = Clock.system();
        private Executor taskExecutor;
        private long maxPendingTimeouts = -1;
        private ThreadFactory threadFactory = defaultThreadFactory();

        private Builder() {
        }

        /** The length of one tick: timeouts fire at most about this late. */
        public Builder tickDuration(long tickDuration, TimeUnit unit) {
            this.tickDuration = tickDuration;
            this.tickUnit = unit;
            return this;
        }

        /** Slots in the wheel (1..2^30), rounded up to a power of two. */
        public Builder ticksPerWheel(int ticksPerWheel) {
            this.ticksPerWheel = ticksPerWheel;
            return this;
        }

        /** The time source; a {@link ManualClock} makes the timer thread-free and deterministic. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Where expired tasks run; null (the default) runs them on the firing thread. */
        public Builder taskExecutor(Executor taskExecutor) {
            this.taskExecutor = taskExecutor;
            return this;
        }

        /** Rejects new timeouts beyond this many pending; 0 or less means no limit. */
        public Builder maxPendingTimeouts(long maxPendingTimeouts) {
            this.maxPendingTimeouts = maxPendingTimeouts;
            return this;
        }

        /** Creates the worker thread (unused with a {@link ManualClock}). */
        public Builder threadFactory(ThreadFactory threadFactory) {
            this.threadFactory = threadFactory;
            return this;
        }

        /** Builds the timer; its worker starts with the first timeout. */
        public HashedWheelTimer build() {
            return new HashedWheelTimer(this);
        }
    }
}
