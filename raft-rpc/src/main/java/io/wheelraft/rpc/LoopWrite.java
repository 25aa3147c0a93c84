package io.wheelraft.rpc;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a stream's write on the event loop that writes the stream's messages, one queued task at
 * a time. gRPC moves every write to that loop anyway, so posting costs no extra wake-up; what
 * other threads hand the stream before the task runs (the items of other groups) leaves in the
 * same message. A request that finds a task queued does nothing: the task takes its items along,
 * because it clears its flag before it writes.
 *
 * <p>Without a loop (not known yet, or refusing tasks because it is shutting down) the write runs
 * on the requesting thread; after a refusal it always does.
 *
 * <p>Thread-safe. The write itself must be safe to run on any thread and must find nothing to do
 * without harm (a task may run after another thread has already written everything).
 */
public final class LoopWrite {

    private final Runnable write;
    private final AtomicBoolean posted = new AtomicBoolean();
    private volatile Executor loop;

    /** @param loop the stream's event loop, or null to write on the requesting thread until {@link #useLoop} */
    public LoopWrite(Executor loop, Runnable write) {
        this.loop = loop;
        this.write = write;
    }

    /** From now on, writes go to a task on {@code streamLoop}; null keeps them on the requesting thread. */
    public void useLoop(Executor streamLoop) {
        this.loop = streamLoop;
    }

    /** Writes what the stream holds: from a task on its loop, or here when there is none. */
    public void request() {
        Executor l = loop;
        if (l == null) {
            write.run();
            return;
        }
        if (!posted.compareAndSet(false, true)) {
            return; // the queued task takes it along
        }
        try {
            l.execute(this::runPosted);
        } catch (RejectedExecutionException e) {
            loop = null;
            posted.set(false);
            write.run();
        }
    }

    private void runPosted() {
        posted.set(false);
        write.run();
    }
}
