package io.wheelraft.core.node;

import io.wheelraft.core.Task;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Carries one node's {@code apply} tasks from client threads to its Raft lane in batches.
 *
 * <p>A caller queues its task and, if no drain is pending, posts one to the lane; the drain takes
 * everything queued by then. So a burst of concurrent {@code apply} calls becomes one proposal
 * (one log append, one AppendEntries per follower) and the hand-off costs no thread of its own:
 * the task goes straight from the caller's thread to the lane. (This replaced a process-wide
 * Disruptor ring, which added a thread hop per batch and, with a sleeping wait strategy, kept a
 * consumer thread spinning at about a sixth of a core while the node was idle.)
 *
 * <p>When the node has nothing in flight (every proposed entry is committed), a caller that is not
 * an event loop runs the drain itself on an idle lane instead of waking a lane thread: a lone
 * request (one client, one increment in flight) then goes from the caller's thread straight into
 * the log and onto the wire, one thread hop less. While entries are in flight the drain keeps its hand-off, because the short
 * wait for a lane thread is what lets concurrent {@code apply} calls pile up into one batch (running
 * every proposal inline halved throughput at 16 and 128 requests in flight). This is Nagle's rule
 * turned around: send at once when the pipe is empty, batch while it is busy.
 *
 * <p>When the caller is a transport event loop (the proposals come from client messages it is
 * reading), the drain is neither run at once nor handed to a lane thread but deferred on that same
 * loop: it runs once the loop has delivered the rest of what it read, so the burst of requests
 * that came in one read forms one batch, and no lane thread has to be woken for it (a wake-up
 * costs tens of microseconds on a loaded machine; docs/benchmarks.md, step 9). This holds for an
 * idle pipeline too (step 10): proposing the first request of a read at once split every client
 * message that found the pipeline idle into a batch of one and a batch of the rest, and with a
 * closed loop of clients those two batches came back as two answers, were sent again as two
 * messages and never merged, so 16 requests in flight travelled in about two groups instead of
 * one. A lone request waits only for the rest of its read, on the same thread: its median
 * latency did not move, and whether its slowest percent pays a little is within the machine's
 * noise (docs/benchmarks.md, steps 10 and 10b).
 *
 * <p>Bounded: past {@code capacity} queued tasks {@link #offer} refuses at once, so the caller can
 * answer BUSY and {@code apply} never blocks. {@link #offer} is safe from any thread.
 */
final class ProposalBuffer {

    /** The most tasks handed to the node in one batch; more wait for the next drain. */
    static final int MAX_BATCH = 1024;

    private final Queue<Task> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean drainPosted = new AtomicBoolean();
    private final int capacity;
    private final Executor lane;
    private final Executor laneHere;
    private final BooleanSupplier pipelineIdle;
    private final Supplier<Executor> callerLoop;
    private final Consumer<List<Task>> sink;
    private final Runnable drain = this::drain;
    /** A drain deferred on the caller's event loop: made once, not per burst. */
    private final Runnable drainOnLane;

    /** A buffer that always hands its drain to {@code lane}. */
    ProposalBuffer(int capacity, Executor lane, Consumer<List<Task>> sink) {
        this(capacity, lane, lane, () -> false, () -> null, sink);
    }

    /**
     * @param lane         runs a drain on a lane thread
     * @param laneHere     runs a drain on the calling thread if the lane is idle (else queues it), see
     *                     {@link SerialLane#executeHere}
     * @param pipelineIdle true when the node has no proposed entry waiting for commit; then a drain
     *                     from a thread without an event loop goes to {@code laneHere}
     * @param callerLoop   the calling thread's event loop, or null when it runs none (see
     *                     {@link io.wheelraft.core.spi.RaftTransport#laterOnCallingThread()}); a drain
     *                     is deferred there, then goes to {@code laneHere}
     */
    ProposalBuffer(int capacity, Executor lane, Executor laneHere, BooleanSupplier pipelineIdle,
                   Supplier<Executor> callerLoop, Consumer<List<Task>> sink) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, was " + capacity);
        }
        this.capacity = capacity;
        this.lane = lane;
        this.laneHere = laneHere;
        this.pipelineIdle = pipelineIdle;
        this.callerLoop = callerLoop;
        this.drainOnLane = () -> laneHere.execute(drain);
        this.sink = sink;
    }

    /** Queues {@code task} for the next batch; false (nothing queued) when the buffer is full. */
    boolean offer(Task task) {
        if (queued.incrementAndGet() > capacity) {
            queued.decrementAndGet();
            return false;
        }
        queue.add(task);
        if (drainPosted.compareAndSet(false, true)) {
            postDrain();
        }
        return true;
    }

    private void postDrain() {
        Executor loop = callerLoop.get();
        if (loop != null) {
            try {
                loop.execute(drainOnLane);
                return;
            } catch (RejectedExecutionException shuttingDown) {
                // the loop is closing: the lane takes the drain, so no task is stranded
            }
        }
        if (pipelineIdle.getAsBoolean()) {
            laneHere.execute(drain);
            return;
        }
        lane.execute(drain);
    }

    /** Tasks queued and not yet handed to the node. */
    int size() {
        return queued.get();
    }

    private void drain() {
        // Cleared before polling: a task queued after this point posts a new drain, so none is stranded.
        drainPosted.set(false);
        List<Task> batch = new ArrayList<>(Math.min(queued.get(), MAX_BATCH));
        Task t;
        while (batch.size() < MAX_BATCH && (t = queue.poll()) != null) {
            batch.add(t);
        }
        queued.addAndGet(-batch.size());
        if (!queue.isEmpty() && drainPosted.compareAndSet(false, true)) {
            lane.execute(drain);
        }
        if (!batch.isEmpty()) {
            sink.accept(batch);
        }
    }
}
