package io.wheelraft.core.node;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: the single owner of a
 * piece of state (a node's Raft state, its disk writes, its apply loop) without a thread of its
 * own. Many lanes share one bounded pool. {@link #execute} is safe from any thread.
 *
 * <p>A task may {@linkplain #pauseAfterCurrentTask() pause} the lane while it waits for
 * something slow that happens elsewhere (a node's term and vote being synced together with other
 * groups'): the pool thread goes on to other lanes, nothing else of this lane runs, and
 * {@link #resumeWith} runs the continuation before any task queued meanwhile.
 */
public final class SerialLane implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(SerialLane.class);
    /** Tasks run per turn before yielding the pool thread, so one busy lane cannot starve others. */
    private static final int BATCH = 256;

    private static final VarHandle SCHEDULED;

    static {
        try {
            SCHEDULED = MethodHandles.lookup().findVarHandle(SerialLane.class, "scheduled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The lane's name is {@code owner + suffix}, joined only when a log line needs it: a node's
     * lanes share its name, and a process hosting many groups keeps four lanes per group.
     */
    private final String owner;
    private final String suffix;
    private final Executor pool;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Whether a drain is queued or running (a field and not an AtomicBoolean: one object less per lane). */
    @SuppressWarnings("unused") // accessed through SCHEDULED
    private volatile boolean scheduled;
    /** Continuations given to {@link #resumeWith}: they run before {@link #tasks}. */
    private final Queue<Runnable> continuations = new ConcurrentLinkedQueue<>();
    private static final int RUNNING = 0;
    /** A task asked to pause; the drain parks when that task returns, unless resumed first. */
    private static final int PAUSE_REQUESTED = 1;
    /** Parked: no drain runs (and {@code scheduled} stays true, so none is started) until resumed. */
    private static final int PARKED = 2;
    private final AtomicInteger pause = new AtomicInteger(RUNNING);
    /** Gets a task's failure first; true means it was handled and is not logged. */
    private final java.util.function.Predicate<Throwable> failureHandler;

    public SerialLane(String name, Executor pool) {
        this(name, pool, t -> false);
    }

    /**
     * @param failureHandler called on the lane with whatever a task throws; returns true if it
     *                       dealt with it (e.g. a node stopping on a storage failure), else the
     *                       lane logs it
     */
    public SerialLane(String name, Executor pool, java.util.function.Predicate<Throwable> failureHandler) {
        this(name, "", pool, failureHandler);
    }

    /** A lane named {@code owner + suffix} (e.g. a node's name and {@code "-disk"}). */
    SerialLane(String owner, String suffix, Executor pool, java.util.function.Predicate<Throwable> failureHandler) {
        this.owner = owner;
        this.suffix = suffix;
        this.pool = pool;
        this.failureHandler = failureHandler;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        if (SCHEDULED.compareAndSet(this, false, true)) {
            pool.execute(this::drain);
        }
    }

    /**
     * Like {@link #execute}, but when the lane is idle the calling thread runs it (and whatever is
     * queued before it) at once instead of waking a pool thread: one thread hop less for work that
     * arrives on a thread that may do lane work, such as a transport I/O thread or a disk thread
     * acknowledging a write. Order and one-at-a-time are kept: the caller becomes the lane's
     * runner exactly as a pool thread would. Lane tasks never block, so the caller is held only
     * for their CPU time (at most one batch; the rest goes to the pool).
     */
    public void executeHere(Runnable task) {
        tasks.add(task);
        if (SCHEDULED.compareAndSet(this, false, true)) {
            drain();
        }
    }

    /**
     * Called by the running task: once it returns, the lane runs nothing more until
     * {@link #resumeWith} (which may come first, even from inside the task; then the lane does not
     * stop). Lane thread only.
     */
    void pauseAfterCurrentTask() {
        pause.set(PAUSE_REQUESTED);
    }

    /**
     * Ends a pause: {@code continuation} runs on the lane before every task queued so far. Safe
     * from any thread. Without a pause it just runs next (a continuation that finds its work done,
     * as when the paused task waited for it itself, does nothing).
     */
    void resumeWith(Runnable continuation) {
        continuations.add(continuation);
        while (true) {
            int state = pause.get();
            if (state == PAUSE_REQUESTED) {
                if (pause.compareAndSet(PAUSE_REQUESTED, RUNNING)) {
                    return; // the pausing task still runs: its drain goes on with the continuation
                }
            } else if (state == PARKED) {
                if (pause.compareAndSet(PARKED, RUNNING)) {
                    pool.execute(this::drain); // scheduled stayed true while parked
                    return;
                }
            } else {
                if (SCHEDULED.compareAndSet(this, false, true)) {
                    pool.execute(this::drain);
                }
                return;
            }
        }
    }

    private void drain() {
        for (int i = 0; i < BATCH; i++) {
            Runnable r = continuations.poll();
            if (r == null) {
                r = tasks.poll();
            }
            if (r == null) {
                break;
            }
            try {
                r.run();
            } catch (Throwable t) {
                if (!handled(t)) {
                    LOG.error("task on lane {} failed", name(), t);
                }
            }
            if (pause.get() == PAUSE_REQUESTED && pause.compareAndSet(PAUSE_REQUESTED, PARKED)) {
                return; // parked: scheduled stays true, so no other drain starts until resumeWith
            }
        }
        scheduled = false;
        // Re-check: a task added between the last poll and the flag reset must not be stranded.
        if ((!tasks.isEmpty() || !continuations.isEmpty()) && SCHEDULED.compareAndSet(this, false, true)) {
            pool.execute(this::drain);
        }
    }

    private boolean handled(Throwable t) {
        try {
            return failureHandler.test(t);
        } catch (RuntimeException e) {
            LOG.error("failure handler of lane {} threw", name(), e);
            return false;
        }
    }

    private String name() {
        return suffix.isEmpty() ? owner : owner + suffix;
    }

    @Override
    public String toString() {
        return "SerialLane[" + name() + "]";
    }
}
