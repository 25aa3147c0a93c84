package io.wheelraft.client;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;

/**
 * The closure of a command the client service proposed: the exactly-once state machine fills in
 * how the command ended (applied now, answered from the retry table, or stale) before running it.
 * Filled and run on the apply thread; run on a node thread with an error when never applied.
 */
abstract class ProposalClosure implements Closure {

    RetryTable.Kind kind = RetryTable.Kind.NEW;
    byte[] result = new byte[0];
    long index;

    void answered(RetryTable.Kind kind, byte[] result, long index) {
        this.kind = kind;
        this.result = result;
        this.index = index;
    }

    @Override
    public abstract void run(Status status);
}
