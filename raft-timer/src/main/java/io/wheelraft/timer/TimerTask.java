package io.wheelraft.timer;

/** Work to run when a {@link Timeout} expires. */
@FunctionalInterface
public interface TimerTask {

    /**
     * Runs the task. An exception thrown here is logged by the timer and never stops it.
     *
     * @param timeout the handle this task was scheduled with
     */
    void run(Timeout timeout) throws Exception;
}
