package io.wheelraft.core.spi;

import io.wheelraft.core.PeerId;

import java.util.function.Consumer;

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
     * Whether {@link #setTermAndVoteLater} returns before the write is durable, so that the node
     * waits for it without holding a thread: true for a storage that syncs the writes of many
     * groups together. False by default.
     */
    default boolean writesLater() {
        return false;
    }

    /**
     * Starts the atomic, durable write of {@code term} and {@code votedFor}; {@code done} runs once
     * with null when it is durable ({@link #term()} and {@link #votedFor()} return the new values
     * from then on) or with the {@link StorageException} it failed with (nothing changed). It may
     * run on any thread, before or after this method returns, and must be quick (it only hands the
     * rest of the node's work back to the node's own thread). A node starts no other write of this
     * storage before {@code done} ran. The default writes synchronously.
     */
    default void setTermAndVoteLater(long term, PeerId votedFor, Consumer<RuntimeException> done) {
        try {
            setTermAndVote(term, votedFor);
        } catch (RuntimeException e) {
            done.accept(e);
            return;
        }
        done.accept(null);
    }

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
