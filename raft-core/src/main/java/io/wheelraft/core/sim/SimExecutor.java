package io.wheelraft.core.sim;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * A single-threaded FIFO executor drained explicitly by the simulation: every "pool" of every
 * simulated node is this one queue, so a run is one deterministic interleaving chosen by the seed.
 * Not thread-safe: only the simulation thread may use it.
 */
public final class SimExecutor implements Executor {

    /** A drain that runs this many tasks without emptying the queue is a livelock, not progress. */
    private static final long MAX_TASKS_PER_DRAIN = 50_000_000L;

    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private long ran;

    @Override
    public void execute(Runnable task) {
        queue.add(task);
    }

    /** Runs queued tasks, including those they queue, until none is left. */
    public void drain() {
        long n = 0;
        Runnable r;
        while ((r = queue.poll()) != null) {
            r.run();
            ran++;
            if (++n > MAX_TASKS_PER_DRAIN) {
                throw new IllegalStateException("simulation livelock: " + n + " tasks ran without the queue emptying");
            }
        }
    }

    /** Tasks run so far: the work a simulated run did, for tests that bound it (a loop of wake-ups shows here). */
    public long tasksRun() {
        return ran;
    }

    public boolean isIdle() {
        return queue.isEmpty();
    }
}
