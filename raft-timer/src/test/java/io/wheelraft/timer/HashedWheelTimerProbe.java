package io.wheelraft.timer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;

/**
 * Test access to the inside of a {@link HashedWheelTimer}: a timer whose worker never runs, so
 * the test runs the worker's passes itself ({@link #runWorkerPass}), and reads of the staging
 * state (which stripe stages, where a timeout waits, its deadline). It lives in the timer's
 * package under src/test, so the production class carries no methods for tests.
 *
 * <p>Thread-safety: the reads take the stripe locks, like the timer; {@link #runWorkerPass} must
 * be called by one thread at a time, as the worker would be.
 */
final class HashedWheelTimerProbe {

    private HashedWheelTimerProbe() {
    }

    /**
     * For {@link HashedWheelTimer.Builder#threadFactory}: the timer "starts" a worker whose
     * {@code start} does nothing, so no thread ever runs its loop and waking it is harmless.
     */
    static ThreadFactory noWorker() {
        return loop -> new Thread(loop, "never-started-wheel-worker") {
            @Override
            public synchronized void start() {
                // the test drives the worker's passes with runWorkerPass
            }
        };
    }

    /**
     * Runs one worker pass and its due tasks on the calling thread, and returns the relative time
     * at which the worker would pass next. Only for a timer built with {@link #noWorker()}.
     */
    static long runWorkerPass(HashedWheelTimer timer) {
        List<WheelTimeout> due = new ArrayList<>();
        timer.pass(due);
        timer.runAll(due);
        return timer.wakeAt;
    }

    /** Relative time on the timer's clock. */
    static long relativeNow(HashedWheelTimer timer) {
        return timer.clock.nanoTime() - timer.startTime;
    }

    /** Whether some stripe currently lets callers stage (the worker is ticking). */
    static boolean isStaging(HashedWheelTimer timer) {
        for (WheelStripe stripe : timer.stripes) {
            stripe.lock();
            try {
                if (stripe.staging) {
                    return true;
                }
            } finally {
                stripe.unlock();
            }
        }
        return false;
    }

    /** The worker's staging interval in nanoseconds. */
    static long drainNanos(HashedWheelTimer timer) {
        return timer.drainNanos;
    }

    /** Whether {@code timeout} waits in a staged list (no deadline yet). */
    static boolean isStaged(HashedWheelTimer timer, Timeout timeout) {
        return inspect(timeout, t -> t.stripe().wheel.isStaged(t));
    }

    /** Whether {@code timeout} is linked into a slot of the wheel (not in a list). */
    static boolean isInSlot(HashedWheelTimer timer, Timeout timeout) {
        return inspect(timeout, t -> t.stripe().wheel.isInSlot(t));
    }

    /** The relative deadline of {@code timeout} (its delay while staged). */
    static long deadlineOf(HashedWheelTimer timer, Timeout timeout) {
        return inspect(timeout, t -> t.deadline);
    }

    /** Reads {@code timeout}'s state under its stripe's lock. */
    private static <R> R inspect(Timeout timeout, Function<WheelTimeout, R> read) {
        WheelTimeout t = (WheelTimeout) timeout;
        WheelStripe stripe = t.stripe();
        stripe.lock();
        try {
            return read.apply(t);
        } finally {
            stripe.unlock();
        }
    }
}
