package io.wheelraft.core.node;

import io.wheelraft.core.Task;

import java.util.List;
import java.util.function.Consumer;

/**
 * Carries {@link Task}s from client threads to their node in batches. Bounded: when full,
 * {@link #offer} returns false at once and the caller reports BUSY, so {@code apply} never blocks.
 */
public interface ProposalQueue extends AutoCloseable {

    /**
     * Queues a task for {@code sink}; batches of tasks for one sink are delivered together.
     *
     * @return false if the queue is full
     */
    boolean offer(Consumer<List<Task>> sink, Task task);

    @Override
    void close();
}
