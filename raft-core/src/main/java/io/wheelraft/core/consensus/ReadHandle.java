package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

/**
 * A caller waiting for a linearizable read (ReadIndex, thesis §6.4), as the core holds it: the
 * core only keeps it and hands it back in {@link Ready.ReadsConfirmed} or {@link Ready.ReadsFailed};
 * the node shell completes it when it carries the batch out, on its Raft lane.
 */
public interface ReadHandle {

    /** Leadership is confirmed: the read may run once {@code readIndex} is applied. */
    void confirmed(long readIndex);

    /** The read cannot be served here; {@code leaderHint} is the leader if known (may be null). */
    void failed(PeerId leaderHint);
}
