package io.wheelraft.timer;

/** A handle to a task scheduled on a {@link Timer}. Safe to use from any thread. */
public interface Timeout {

    /** The timer that created this handle. */
    Timer timer();

    /** The task this handle runs. */
    TimerTask task();

    /** True once the task has started running (or was handed to the task executor). */
    boolean isExpired();

    /** True once {@link #cancel()} succeeded. */
    boolean isCancelled();

    /**
     * Cancels the task if it has not started yet.
     *
     * @return true if this call cancelled it; false if it already ran, started or was cancelled
     */
    boolean cancel();
}
