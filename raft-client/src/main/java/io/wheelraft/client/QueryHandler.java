package io.wheelraft.client;

import java.nio.ByteBuffer;

/**
 * Implemented by a state machine that answers {@link RaftClient} queries. The library calls
 * {@link #query} never at the same time as {@code onApply} (it holds the state machine's lock),
 * so the state read is a consistent applied state; keep it short, it delays applying.
 */
@FunctionalInterface
public interface QueryHandler {

    /** Answers {@code query} from the applied state; must not change the state. */
    byte[] query(ByteBuffer query);
}
