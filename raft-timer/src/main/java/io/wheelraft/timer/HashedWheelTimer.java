package io.wheelraft.timer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

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
 *   <li>The worker thread parks until the earliest tick that holds a pending timeout is due,
 *       instead of waking every tick; scheduling an earlier timeout wakes it. It wakes a
 *       quarter tick after that tick's earliest deadline if that comes before the tick's
 *       end, so timeouts usually fire well within the tick.</li>
 *   <li>{@link Timeout#cancel()} releases the timeout promptly: one linked into a slot is
 *       unlinked at once (O(1) under a short lock); one still waiting in a staged list is
 *       dropped from it by the list's next stamp or drain (within half a tick or 64 schedules
 *       of its stripe), without the lock and without touching a slot.</li>
 *   <li>Callers link timeouts into the wheel themselves instead of queueing them for the
 *       worker. The wheel is striped (one bucket array and lock per stripe, up to two stripes
 *       per core; a thread always uses the same stripe), so concurrent schedulers rarely meet,
 *       and a schedule or cancel costs one uncontended atomic instruction.</li>
 *   <li>While the worker is ticking (timeouts keep being scheduled), a schedule does not read
 *       the clock: it stages the timeout with its delay, and the deadline is stamped within
 *       half a tick from a clock reading taken under the stripe's lock, after the call, so it
 *       is never early. Such a timeout may fire up to half a tick later than one whose
 *       deadline was read at the call. See docs/timer.md, "Staged schedules".</li>
 *   <li>Built with {@link Builder#drivenBy(ManualClock)} no thread is started: the clock's
 *       {@code advance} fires due timeouts on the calling thread, deterministically.</li>
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
    private static final int MAX_STRIPES = 16;
    /** Direct links on one stripe between two worker passes that make the worker start ticking. */
    static final int ACTIVATE_AFTER_DIRECT = 8;
    /** Every this many staged schedules on a stripe, the caller stamps the staged list itself (power of two). */
    static final int STAMP_EVERY = 64;
    /** Passes without a staged timeout after which the worker stops ticking and may park long. */
    static final int QUIET_PASSES = 4;
    /**
     * The worker wakes at most this fraction of a tick after the earliest deadline of a tick
     * with work (instead of at the tick's end): 1/SLACK_DIVISOR of a tick.
     */
    static final int SLACK_DIVISOR = 4;
    private static final long STOPPED = -1;
    private static final long STAGED = -2;
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();
    private static final VarHandle WAKE_AT;

    static {
        try {
            WAKE_AT = MethodHandles.lookup().findVarHandle(HashedWheelTimer.class, "wakeAt", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Package-private for the test probe in src/test (HashedWheelTimerProbe), which watches the
    // staging protocol from outside; nothing in this package besides it reads them.
    final Clock clock;
    final long startTime;
    private final long tickNanos;
    private final long maxPendingTimeouts;
    private final ThreadFactory threadFactory;
    private final TaskRunner runner;
    private final ManualDriver manualDriver;
    final WheelStripe[] stripes;
    private final int stripeMask;
    /** While ticking, the worker passes at least this often, so staged timeouts wait at most this long. */
    final long drainNanos;
    /**
     * The worker passes at most this long after the earliest due deadline (rather than at the
     * end of its tick), so a timeout is rarely more than this late plus the OS's wake-up delay.
     * Timeouts due within this window of each other are fired by one wake-up.
     */
    private final long slackNanos;
    /** Worker-confined: consecutive passes that saw no staged timeout (QUIET_PASSES = idle). */
    private int quietPasses = QUIET_PASSES;
    /** Counts pending timeouts only when {@code maxPendingTimeouts} is set (exact limit check). */
    private final AtomicLong reserved = new AtomicLong();
    private final TimerStats stats = new TimerStats(this::pendingTimeouts);
    private final Object lifecycle = new Object();
    /** Guarded by {@link #lifecycle}. */
    private Thread worker;
    private volatile Thread workerThread;
    private volatile boolean stopped;
    /**
     * Relative time the worker sleeps until. Adders lower it (CAS) and unpark the worker; the
     * worker raises it to Long.MAX_VALUE before each scan of the stripes and then lowers it to
     * what the scan found, so an add racing with the scan is never missed.
     */
    volatile long wakeAt = Long.MAX_VALUE; // written through WAKE_AT; package-private for the test probe

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
        ManualClock manualClock = b.manualClock;
        boolean manual = manualClock != null;
        // One stripe under a manual clock keeps firing order a pure function of call order.
        // Two stripes per core: a thread's stripe is its id, so spare stripes make two busy
        // threads that were not started together less likely to share one.
        int stripeCount = manual ? 1 : Math.min(MAX_STRIPES,
                normalizeTicksPerWheel(2 * Runtime.getRuntime().availableProcessors()));
        this.stripes = new WheelStripe[stripeCount];
        for (int i = 0; i < stripeCount; i++) {
            stripes[i] = new WheelStripe(this, tick, wheelSize);
        }
        this.stripeMask = stripeCount - 1;
        this.drainNanos = Math.max(1, tick / 2);
        this.slackNanos = Math.max(1, tick / SLACK_DIVISOR);
        this.startTime = clock.nanoTime();
        if (manual) {
            this.manualDriver = new ManualDriver(manualClock);
            manualClock.subscribe(manualDriver);
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
        if (maxPendingTimeouts > 0) {
            reservePending(task);
        }
        WheelStripe stripe = stripes[WheelStripe.threadIndex() & stripeMask];
        WheelTimeout timeout = new WheelTimeout(stripe, task);
        // Kept small so that the JIT inlines it into the caller; the rest is in scheduleDirect.
        if (stripe.staging) { // a racy peek, confirmed under the lock
            stripe.lock();
            try {
                if (stripe.staging) { // implies not stopped: stop() lowers the flag under this lock
                    // Fast path: no clock read. The deadline is stamped later from a clock
                    // reading taken under this lock, after this section (never early).
                    timeout.deadline = delayNanos;
                    stripe.wheel.stage(timeout);
                    if ((++stripe.stagedSinceLook & (STAMP_EVERY - 1)) == 0) {
                        stampStaged(stripe);
                    }
                    return timeout;
                }
            } finally {
                stripe.unlock();
            }
        }
        return scheduleDirect(stripe, timeout, delayNanos);
    }

    /**
     * A fast stream does not wait for the worker (which may be short of CPU): every so often a
     * caller stamps its stripe's staged list itself, reading the clock under the lock, hence
     * after every staged call. It only fixes the deadlines; linking them into slots is left to
     * the worker's next pass, so a timeout cancelled before then never touches a slot. Called
     * with the stripe's lock held.
     */
    private void stampStaged(WheelStripe stripe) {
        int dropped = stripe.wheel.stampStaged(clock.nanoTime() - startTime);
        if (dropped > 0) {
            releasePending(dropped);
        }
    }

    /** The path when the worker is not ticking: read the clock, link, wake the worker if needed. */
    private Timeout scheduleDirect(WheelStripe stripe, WheelTimeout timeout, long delayNanos) {
        long now = clock.nanoTime() - startTime;
        long fireAt;
        boolean activate = false;
        stripe.lock();
        try {
            if (stripe.staging) { // the worker started ticking meanwhile: stage after all
                timeout.deadline = delayNanos;
                stripe.wheel.stage(timeout);
                stripe.stagedSinceLook++;
                fireAt = STAGED;
            } else if (stopped) {
                fireAt = STOPPED;
            } else {
                timeout.deadline = ManualClock.saturatedAdd(now, delayNanos);
                fireAt = stripe.wheel.add(timeout);
                activate = ++stripe.directSinceLook == ACTIVATE_AFTER_DIRECT;
            }
        } finally {
            stripe.unlock();
        }
        if (fireAt == STOPPED) {
            releasePending(1);
            throw new IllegalStateException("cannot schedule " + timeout.task() + ": the timer is stopped");
        }
        if (fireAt != STAGED && manualDriver == null) {
            // The end of its tick, or sooner if its deadline is early in the tick (see slackNanos).
            long wake = Math.min(fireAt, ManualClock.saturatedAdd(ManualClock.saturatedAdd(now, delayNanos), slackNanos));
            wakeWorkerFor(activate ? now : wake);
        }
        return timeout;
    }

    /**
     * After a direct link: wakes the worker if it must pass before it planned to, that is, if
     * the timeout is due earlier, or if enough direct links arrived since its last pass that it
     * should start ticking (then {@code wakeAt} is now), so that a steady stream of schedules is
     * staged, without a clock read or a wake-up per call.
     */
    private void wakeWorkerFor(long wakeAt) {
        Thread w = workerThread;
        if (w == null) {
            w = startWorker();
            if (w == null) {
                return; // stopped before the worker started
            }
        }
        if (wakeAt < (long) WAKE_AT.getVolatile(this) && lowerWakeAt(wakeAt)) {
            LockSupport.unpark(w);
        }
    }

    private void reservePending(TimerTask task) {
        long count = reserved.incrementAndGet();
        if (count > maxPendingTimeouts) {
            // Cancelled timeouts left in staged lists still count until a drain drops them:
            // drop them now and look again, so that the limit counts exactly the live ones.
            purgeCancelled();
            count = reserved.get();
        }
        if (count > maxPendingTimeouts) {
            reserved.decrementAndGet();
            throw new RejectedExecutionException("Number of pending timeouts (" + count
                    + ") would exceed maxPendingTimeouts (" + maxPendingTimeouts + "); rejected " + task);
        }
    }

    /** Drops the cancelled timeouts that wait in every stripe's staged lists; releases them. */
    private void purgeCancelled() {
        for (WheelStripe stripe : stripes) {
            int dropped;
            stripe.lock();
            try {
                dropped = stripe.wheel.purgeCancelled();
            } finally {
                stripe.unlock();
            }
            if (dropped > 0) {
                releasePending(dropped);
            }
        }
    }

    /** Called when timeouts leave the wheel (ran, cancelled, stopped). */
    void releasePending(long count) {
        if (maxPendingTimeouts > 0) {
            reserved.addAndGet(-count);
        }
    }

    /** Lowers wakeAt to {@code time} unless it is already lower; true if it lowered it. */
    private boolean lowerWakeAt(long time) {
        long current;
        do {
            current = (long) WAKE_AT.getVolatile(this);
            if (current <= time) {
                return false;
            }
        } while (!WAKE_AT.compareAndSet(this, current, time));
        return true;
    }

    /** The clock this timer was built with ({@link Builder#clock} or {@link Builder#drivenBy}). */
    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == workerThread || TaskRunner.isRunningTaskOf(this)) {
            throw new IllegalStateException(
                    "HashedWheelTimer.stop() cannot be called from a TimerTask of the same timer");
        }
        List<Timeout> left = new ArrayList<>();
        Thread w;
        synchronized (lifecycle) {
            if (stopped) {
                return Collections.emptySet();
            }
            for (WheelStripe stripe : stripes) {
                stripe.lock();
            }
            try {
                stopped = true;
                long now = clock.nanoTime() - startTime;
                for (WheelStripe stripe : stripes) {
                    stripe.staging = false;
                    stripe.wheel.drainPending(left, now);
                }
            } finally {
                for (WheelStripe stripe : stripes) {
                    stripe.unlock();
                }
            }
            w = worker;
        }
        reserved.set(0);
        if (manualDriver != null) {
            manualDriver.clock.unsubscribe(manualDriver);
        }
        if (w != null) {
            joinWorker(w);
        }
        if (stripes.length > 1) {
            left.sort(Comparator.comparingLong(t -> ((WheelTimeout) t).deadline));
        }
        return Collections.unmodifiableSet(new LinkedHashSet<>(left));
    }

    /** The number of timeouts scheduled that have neither expired nor been cancelled. */
    public long pendingTimeouts() {
        long sum = 0;
        for (WheelStripe stripe : stripes) {
            int dropped;
            stripe.lock();
            try {
                dropped = stripe.wheel.purgeCancelled(); // cancelled ones a cancel left in a list
                sum += stripe.wheel.size();
            } finally {
                stripe.unlock();
            }
            if (dropped > 0) {
                releasePending(dropped);
            }
        }
        return sum;
    }

    /** Pending, fired and lateness figures, for monitoring. */
    public TimerStats stats() {
        return stats;
    }

    /** The tick length in nanoseconds. */
    public long tickNanos() {
        return tickNanos;
    }

    private Thread startWorker() {
        synchronized (lifecycle) {
            if (worker == null && !stopped) {
                Thread t = threadFactory.newThread(this::workerLoop);
                if (t == null) {
                    throw new IllegalStateException("threadFactory " + threadFactory + " returned no thread");
                }
                worker = t;
                workerThread = t;
                t.start();
            }
            return worker;
        }
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
        while (!stopped) {
            pass(due);
            runAll(due);
            parkUntilDue();
        }
    }

    /**
     * One pass of the worker: takes what is due into {@code due}, drains the staged lists, and
     * sets {@code wakeAt} to when the next pass must happen.
     *
     * <p>Staging protocol. Each stripe's {@code staging} flag, its staged list and the
     * counters are only touched under the stripe's lock, so for each stripe either a caller's
     * lock section comes first (its timeout is in the list this pass drains, and the pass
     * counts it as activity) or the pass comes first (the caller sees the flag this pass set).
     * The worker keeps the flags up, and passes at least every {@code drainNanos}, while
     * timeouts keep being staged; after {@link #QUIET_PASSES} passes without one, a pass lowers
     * the flags and the worker may park until the next due tick. A caller that then finds the
     * flag down reads the clock and links directly, waking the worker as before.
     */
    void pass(List<WheelTimeout> due) {
        WAKE_AT.setVolatile(this, Long.MAX_VALUE);
        boolean staging = quietPasses < QUIET_PASSES;
        long now = clock.nanoTime() - startTime;
        long drainBy = ManualClock.saturatedAdd(now, drainNanos);
        long next = Long.MAX_VALUE;
        boolean busy = false;
        int taken = 0;
        int dropped = 0;
        for (WheelStripe stripe : stripes) {
            int first = due.size();
            stripe.lock();
            try {
                if (stopped) {
                    return;
                }
                // Stamped deadlines are known: link them first, so that a passed one fires now.
                dropped += stripe.wheel.linkStamped();
                stripe.wheel.expire(now, due);
                if (stripe.wheel.hasStaged()) {
                    // Read under the lock: later than every staged call, so no deadline is early.
                    dropped += stripe.wheel.drainStaged(clock.nanoTime() - startTime);
                } else {
                    stripe.wheel.renewStagedAnchor();
                }
                busy |= stripe.stagedSinceLook > 0 || stripe.directSinceLook >= ACTIVATE_AFTER_DIRECT;
                stripe.stagedSinceLook = 0;
                stripe.directSinceLook = 0;
                stripe.staging = staging;
                next = Math.min(next, stripe.wheel.nextFireTime(staging ? drainBy : Long.MAX_VALUE, slackNanos));
            } finally {
                stripe.unlock();
            }
            taken += due.size() - first;
        }
        quietPasses = busy ? 0 : Math.min(QUIET_PASSES, quietPasses + 1);
        if (staging || quietPasses < QUIET_PASSES) {
            // Stripes accept staged timeouts (or will from the next pass): come back soon.
            next = Math.min(next, drainBy);
        }
        if (taken + dropped > 0) {
            releasePending(taken + dropped);
        }
        if (stripes.length > 1 && due.size() > 1) {
            due.sort(WheelBuckets.BY_DEADLINE);
        }
        lowerWakeAt(next);
    }

    /**
     * Takes every due timeout of every stripe into {@code due} (in deadline order) and returns
     * the earliest relative time at which a stripe has work next. Used under a manual clock,
     * where nothing is ever staged.
     */
    private long expireAll(long now, List<WheelTimeout> due) {
        long next = Long.MAX_VALUE;
        int taken = 0;
        for (WheelStripe stripe : stripes) {
            int first = due.size();
            stripe.lock();
            try {
                if (stopped) {
                    return Long.MAX_VALUE;
                }
                stripe.wheel.expire(now, due);
                next = Math.min(next, stripe.wheel.nextFireTime());
            } finally {
                stripe.unlock();
            }
            taken += due.size() - first;
        }
        if (taken > 0) {
            releasePending(taken);
        }
        if (stripes.length > 1 && due.size() > 1) {
            due.sort(WheelBuckets.BY_DEADLINE);
        }
        return next;
    }

    /** Parks until wakeAt; an add of an earlier timeout lowers it and unparks us. */
    private void parkUntilDue() {
        while (!stopped) {
            long waitNanos = (long) WAKE_AT.getVolatile(this) - (clock.nanoTime() - startTime);
            if (waitNanos <= 0) {
                return;
            }
            LockSupport.parkNanos(this, waitNanos);
            // Interrupts do not stop the timer (stop() does); clear them so parking keeps working.
            Thread.interrupted();
        }
    }

    void runAll(List<WheelTimeout> due) {
        if (due.isEmpty()) {
            return;
        }
        long now = clock.nanoTime() - startTime;
        for (int i = 0, n = due.size(); i < n; i++) {
            WheelTimeout t = due.get(i);
            if (t.markExpired()) {
                stats.recordFired(now - t.deadline);
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
        return "HashedWheelTimer(tick=" + tickNanos + "ns, stripes=" + stripes.length + ", pending=" + pendingTimeouts()
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
            WheelStripe stripe = stripes[0];
            stripe.lock();
            try {
                long rel = stripe.wheel.nextFireTime();
                return rel == Long.MAX_VALUE ? Long.MAX_VALUE : ManualClock.saturatedAdd(startTime, rel);
            } finally {
                stripe.unlock();
            }
        }

        @Override
        public long earliestDeadline() {
            WheelStripe stripe = stripes[0];
            stripe.lock();
            try {
                long rel = stripe.wheel.earliestDeadline();
                return rel == Long.MAX_VALUE ? Long.MAX_VALUE : ManualClock.saturatedAdd(startTime, rel);
            } finally {
                stripe.unlock();
            }
        }

        @Override
        public boolean fire(long now) {
            expireAll(now - startTime, due);
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
        private ManualClock manualClock;

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
         * fires this timer's due timeouts on the advancing thread, deterministically (the wheel
         * has one stripe, so firing order is a function of call order). Replaces an earlier
         * {@link #clock}.
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

        /** Rejects new timeouts beyond this many pending; 0 or less means no limit. */
        public Builder maxPendingTimeouts(long maxPendingTimeouts) {
            this.maxPendingTimeouts = maxPendingTimeouts;
            return this;
        }

        /** Creates the worker thread (unused when {@link #drivenBy driven by} a manual clock). */
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
