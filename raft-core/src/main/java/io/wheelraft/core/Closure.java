package io.wheelraft.core;

/**
 * A callback completed exactly once with the outcome of an asynchronous operation. Called on a
 * node's internal thread: it must not block.
 */
@FunctionalInterface
public interface Closure {
    void run(Status status);
}
