package io.wheelraft.timer;

import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A clock that only moves when a test tells it to. Timers built with {@code drivenBy(clock)}
 * ({@link HashedWheelTimer.Builder#drivenBy}, {@link HierarchicalWheelTimer.Builder#drivenBy})
 * start no thread: they subscribe to the clock, and {@link #advance} fires their due timeouts on
 * the calling thread.
 * When {@code advance} returns, every timeout whose deadline is at or before the new time has
 * run, including timeouts that tasks scheduled during the same advance.
 *
 * <p>Firing is deterministic: time moves to the earliest instant at which any subscribed timer
 * has work (ties broken by subscription order), the clock reads that instant while the tasks
 * run, and each timer runs its due tasks in deadline order (ties in scheduling order).
 *
 * <p>Thread-safety: {@link #nanoTime()} may be read from any thread. {@link #advance} calls
 * are serialised; calling {@code advance} from a task that this clock is firing throws
 * {@link IllegalStateException}.
 */
public final class ManualClock implements Clock {

    /** How many firing passes may happen at one instant before we assume a task loops. */
    private static final int MAX_PASSES_AT_ONE_INSTANT = 100_000;

    private final CopyOnWriteArrayList<Subscriber> subscribers = new CopyOnWriteArrayList<>();
    private final ReentrantLock advanceLock = new ReentrantLock();
    private volatile long now;

    /** Creates a clock reading 0 ns. */
    public ManualClock() {
        this(0L);
    }

    /** Creates a clock reading {@code startNanos}. */
    public ManualClock(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    /**
     * Moves time forward by {@code amount} and fires, on this thread, every timeout of every
     * subscribed timer that comes due on the way.
     *
     * @throws IllegalArgumentException if {@code amount} is negative
     * @throws IllegalStateException if called from a task this clock is firing
     */
    public void advance(long amount, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (amount < 0) {
            throw new IllegalArgumentException("amount must be >= 0 (time never goes back): " + amount + " " + unit);
        }
        advanceNanos(unit.toNanos(amount));
    }

    /** Same as {@code advance(ms, TimeUnit.MILLISECONDS)}. */
    public void advanceMillis(long ms) {
        advance(ms, TimeUnit.MILLISECONDS);
    }

    private void advanceNanos(long nanos) {
        if (advanceLock.isHeldByCurrentThread()) {
            throw new IllegalStateException("advance() called from a task fired by this ManualClock");
        }
        advanceLock.lock();
        try {
            long target = saturatedAdd(now, nanos);
            int passesAtThisInstant = 0;
            while (true) {
                Subscriber next = null;
                long nextTime = Long.MAX_VALUE;
                for (Subscriber s : subscribers) {
                    long t = s.nextFireTime();
                    if (t < nextTime) {
                        nextTime = t;
                        next = s;
                    }
                }
                if (next != null && nextTime <= target) {
                    if (nextTime > now) {
                        now = nextTime;
                        passesAtThisInstant = 0;
                    } else {
                        checkProgress(++passesAtThisInstant);
                    }
                    next.fire(now);
                    continue;
                }
                // No tick boundary before target: fire what is due at target itself (a partial tick).
                if (target > now) {
                    now = target;
                    passesAtThisInstant = 0;
                }
                boolean firedAny = false;
                for (Subscriber s : subscribers) {
                    if (s.earliestDeadline() <= target) {
                        firedAny |= s.fire(target);
                    }
                }
                if (!firedAny) {
                    break;
                }
                checkProgress(++passesAtThisInstant);
            }
            now = target;
        } finally {
            advanceLock.unlock();
        }
    }

    private void checkProgress(int passesAtThisInstant) {
        if (passesAtThisInstant > MAX_PASSES_AT_ONE_INSTANT) {
            throw new IllegalStateException("timer tasks keep rescheduling themselves with no delay at "
                    + now + " ns; time cannot advance");
        }
    }

    void subscribe(Subscriber subscriber) {
        subscribers.add(Objects.requireNonNull(subscriber, "subscriber"));
    }

    void unsubscribe(Subscriber subscriber) {
        subscribers.remove(subscriber);
    }

    static long saturatedAdd(long a, long b) {
        long r = a + b;
        // Overflow iff both operands have the same sign and the result's sign differs.
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** A timer driven by this clock. All times are readings of this clock, in nanoseconds. */
    interface Subscriber {

        /** The earliest time at which this timer wants to fire, or Long.MAX_VALUE if idle. */
        long nextFireTime();

        /** A lower bound of the earliest pending deadline, or Long.MAX_VALUE if nothing pends. */
        long earliestDeadline();

        /**
         * Runs every timeout whose deadline is at or before {@code now}, on the calling thread.
         *
         * @return true if any timeout was taken off the timer (run, or found cancelled)
         */
        boolean fire(long now);
    }
}
