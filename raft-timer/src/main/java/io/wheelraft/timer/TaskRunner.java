package io.wheelraft.timer;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs expired tasks for a timer: inline or on the configured executor, logging (never
 * propagating) what a task throws, and marking the running thread so that the timer can refuse
 * {@code stop()} from inside its own tasks.
 */
final class TaskRunner {

    private static final Logger LOG = LoggerFactory.getLogger(TaskRunner.class);
    private static final ThreadLocal<Timer> RUNNING_FOR = new ThreadLocal<>();

    private final Timer owner;
    private final Executor executor;

    /** @param executor where tasks run; null runs them on the thread that expires them */
    TaskRunner(Timer owner, Executor executor) {
        this.owner = owner;
        this.executor = executor;
    }

    /** Runs {@code task} now or hands it to the executor. Never throws. */
    void submit(Timeout timeout) {
        if (executor == null) {
            run(timeout);
            return;
        }
        try {
            executor.execute(() -> run(timeout));
        } catch (RejectedExecutionException e) {
            LOG.warn("Task executor rejected expired timer task {}; it will not run", timeout.task(), e);
        } catch (RuntimeException e) {
            LOG.warn("Task executor failed to accept expired timer task {}; it will not run", timeout.task(), e);
        }
    }

    /** True if the calling thread is running one of {@code timer}'s tasks. */
    static boolean isRunningTaskOf(Timer timer) {
        return RUNNING_FOR.get() == timer;
    }

    private void run(Timeout timeout) {
        Timer previous = RUNNING_FOR.get();
        RUNNING_FOR.set(owner);
        try {
            timeout.task().run(timeout);
        } catch (Throwable t) {
            LOG.warn("Timer task {} threw; the timer keeps running", timeout.task(), t);
        } finally {
            if (previous == null) {
                RUNNING_FOR.remove();
            } else {
                RUNNING_FOR.set(previous);
            }
        }
    }
}
