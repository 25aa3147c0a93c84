package io.wheelraft.core.node;

import io.wheelraft.core.Task;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

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
    private final Consumer<List<Task>> sink;
    private final Runnable drain = this::drain;

    ProposalBuffer(int capacity, Executor lane, Consumer<List<Task>> sink) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, was " + capacity);
        }
        this.capacity = capacity;
        this.lane = lane;
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
            lane.execute(drain);
        }
        return true;
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
