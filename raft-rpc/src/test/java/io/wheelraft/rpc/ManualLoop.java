package io.wheelraft.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/** An event loop run by hand: tasks wait until the test runs them; it can be made to refuse, as a loop shutting down does. */
final class ManualLoop implements Executor {
    final List<Runnable> tasks = new ArrayList<>();
    boolean refusing;

    @Override
    public void execute(Runnable task) {
        if (refusing) {
            throw new RejectedExecutionException("shutting down");
        }
        tasks.add(task);
    }

    /** Runs the tasks queued now; what they queue waits for the next call. */
    void runAll() {
        List<Runnable> due = new ArrayList<>(tasks);
        tasks.clear();
        due.forEach(Runnable::run);
    }
}
