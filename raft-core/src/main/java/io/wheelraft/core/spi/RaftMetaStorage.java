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

    @Override
    void close();
}
