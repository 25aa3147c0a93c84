package io.wheelraft.core;

import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;

/**
 * The user's replicated state machine. Every method is called on the node's apply thread, one
 * at a time, in log order; none may block for long, because applying stalls behind it.
 */
public interface StateMachine {

    /** Applies a batch of committed entries, in log order. */
    void onApply(Iterator iterator);

    /** Saves state up to the last applied index into {@code writer}; completes {@code done} when written. */
    void onSnapshotSave(SnapshotWriter writer, Closure done);

    /** Replaces state with the snapshot. Returns false (or throws) if it cannot be loaded. */
    boolean onSnapshotLoad(SnapshotReader reader);

    /** This node became leader of {@code term}. */
    void onLeaderStart(long term);

    /** This node stopped being leader. */
    void onLeaderStop(Status status);

    /** A membership configuration was committed. */
    void onConfigurationCommitted(Configuration configuration);

    /**
     * Something failed: a storage error, an apply error or a failed snapshot load, after which the
     * node stops applying (role ERROR); or a failed {@code onSnapshotSave}, after which the node
     * keeps running (nothing was lost, the next snapshot retries).
     */
    void onError(Status error);

    /** The node has shut down; no further calls follow. */
    void onShutdown();
}
