package io.wheelraft.core;

/**
 * Completed once a linearizable read may run: every write committed before the read started
 * has been applied locally ({@code readIndex} is that commit index). Called on the apply thread,
 * so state read inside it is consistent.
 */
@FunctionalInterface
public interface ReadIndexClosure {
    void run(Status status, long readIndex);
}
