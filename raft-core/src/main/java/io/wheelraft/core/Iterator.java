package io.wheelraft.core;

import java.nio.ByteBuffer;

/**
 * Walks a batch of committed entries handed to {@link StateMachine#onApply}. Entries come in log
 * order; {@link #done()} is the closure of the task on the leader that proposed it (null on
 * followers and after a restart). Used only on the apply thread, during that call.
 */
public interface Iterator extends java.util.Iterator<ByteBuffer> {

    /** Log index of the current entry. */
    long index();

    /** Term of the current entry. */
    long term();

    /** The current entry's data (read-only view). */
    ByteBuffer data();

    /**
     * The closure the leader's {@link Task} carried for the current entry (the caller's own object,
     * so a state machine may cast it to its closure type to hand back a result), or null on
     * followers and after a restart. As in SOFAJRaft, the state machine runs it once it has
     * applied the entry; the node runs it itself only for entries not applied (errors).
     */
    Closure done();

    /**
     * Stops applying: the node reports {@code error} through {@link StateMachine#onError} and
     * applies nothing further. Entries before the current one stay applied.
     */
    void setErrorAndRollback(Status error);
}
