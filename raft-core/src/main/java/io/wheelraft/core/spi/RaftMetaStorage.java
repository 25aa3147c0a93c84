package io.wheelraft.core.spi;

import io.wheelraft.core.PeerId;

/**
 * Persists a node's current term and the peer it voted for in that term. {@link #setTermAndVote}
 * is atomic and durable when it returns: a node grants a vote or sends a message of a new term
 * only after it returns. Called from one thread at a time.
 */
public interface RaftMetaStorage extends AutoCloseable {

    /** The persisted term; 0 for a fresh node. */
    long term();

    /** The peer voted for in {@link #term()}, or null. */
    PeerId votedFor();

    /**
     * Atomically and durably records {@code term} and {@code votedFor} (null: no vote).
     *
     * @throws StorageException on I/O failure
     */
    void setTermAndVote(long term, PeerId votedFor);

    /**
     * True while this node may be missing log entries it acknowledged before a storage fault (a
     * damaged WAL, a discarded log or snapshot) and has not yet been repaired from a leader. A
     * repairing node does not vote, pre-vote, campaign, lead, accept a leadership transfer or
     * serve reads. Durable: a restart in the middle of a repair stays fenced. False for a fresh
     * node.
     */
    boolean repairing();

    /**
     * Atomically and durably sets the flag {@link #repairing()} returns, keeping term and vote.
     *
     * @throws StorageException on I/O failure
     */
    void setRepairing(boolean repairing);

    @Override
    void close();
}
