package io.wheelraft.timer;

import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Schedules {@link TimerTask}s to run once after a delay. The shape follows Netty's
 * {@code io.netty.util.Timer}, so code written against Netty ports by changing imports.
 *
 * <p>Thread-safety: every method may be called from any thread, including from inside a
 * running task (except {@link #stop()}).
 */
public interface Timer {

    /**
     * Schedules {@code task} to run once after {@code delay}.
     *
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws IllegalStateException if the timer was stopped
     * @throws java.util.concurrent.RejectedExecutionException if too many timeouts are pending
     */
    Timeout newTimeout(TimerTask task, long delay, TimeUnit unit);

    /**
     * Stops the timer and returns the timeouts that were scheduled but never ran. Their tasks
     * will not run. Further calls to {@link #newTimeout} throw {@link IllegalStateException}.
     *
     * @throws IllegalStateException if called from a task of this timer
     */
    Set<Timeout> stop();

    /**
     * The clock this timer measures delays on. Code that reads the time to compare with what it
     * scheduled (a deadline, a last-heard time) must read this clock, or its idea of "due" and
     * the timer's drift apart (a manual clock in a test would fire timeouts the reader thinks are
     * not due). The default is {@link Clock#system()}.
     */
    default Clock clock() {
        return Clock.system();
    }
}
