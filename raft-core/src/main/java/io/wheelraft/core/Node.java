package io.wheelraft.core;

import java.util.List;

/**
 * One member of a Raft group, embedded in a service. Shaped like SOFAJRaft's {@code Node} so a
 * state machine ports by changing imports. Every method is thread-safe and returns at once;
 * outcomes arrive through closures (completed exactly once, on a node thread: do not block).
 */
public interface Node {

    String groupId();

    PeerId nodeId();

    /** The leader this node knows of, or null. */
    PeerId getLeaderId();

    boolean isLeader();

    /**
     * Whether this node's group is quiet here: no timers and no heartbeats of its own until
     * something wakes it ({@link NodeOptions#quiesceAfterMs}).
     */
    default boolean isQuiet() {
        return false;
    }

    /**
     * Replicates a task. Its closure completes OK after the entry is committed and applied; with
     * NOT_LEADER (leader hint included) on a non-leader, BUSY when the queue is full, and so on.
     */
    void apply(Task task);

    /**
     * Runs {@code done} when a linearizable read may be served, confirmed as the node's
     * {@link NodeOptions#readOnlyOption()} says: {@code readIndex(options.readOnlyOption(), done)}.
     */
    void readIndex(ReadIndexClosure done);

    /**
     * Runs {@code done} when a linearizable read may be served, confirmed as {@code option} says
     * for this one call, whatever the node's options. {@link ReadOnlyOption#READ_INDEX}: the leader
     * confirms with a heartbeat round to a quorum. {@link ReadOnlyOption#LEASE}: the leader serves
     * it without a round while its lease is valid (a quorum acknowledged its heartbeats within the
     * election timeout, bounded by the connection-lost grace and less
     * {@link NodeOptions#leaseClockDriftMs()}) and runs a round otherwise; a leader that has lost
     * its lease and cannot reach a quorum serves nothing. On a follower the read is confirmed by
     * the leader the same way: {@code option} travels with the follower's ReadIndex call (a leader
     * built before that confirms it as its own options say).
     */
    void readIndex(ReadOnlyOption option, ReadIndexClosure done);

    void addPeer(PeerId peer, Closure done);

    void removePeer(PeerId peer, Closure done);

    void changePeers(Configuration newConfiguration, Closure done);

    void addLearners(List<PeerId> learners, Closure done);

    void removeLearners(List<PeerId> learners, Closure done);

    /**
     * Adds {@code witness} as a voting witness: it votes and acknowledges, stores entry headers
     * but no payload, never leads and serves no reads. It catches up as a learner first, like
     * {@link #addPeer}. Runs on the leader. The node at {@code witness} must run with
     * {@link NodeOptions#witness(boolean) NodeOptions.witness(true)}; a data member cannot become a
     * witness in place (the change fails with INVALID_ARGUMENT: remove it first).
     */
    void addWitness(PeerId witness, Closure done);

    /**
     * Sets the election priority of member {@code peer} in the configuration (a replicated
     * configuration change): 0 never leads; among caught-up members the highest leads. Runs on
     * the leader.
     */
    void setPriority(PeerId peer, int priority, Closure done);

    /** Hands leadership to {@code peer}; {@code done} completes when it leads, or fails on timeout. */
    void transferLeadershipTo(PeerId peer, Closure done);

    /** Takes a snapshot now. */
    void snapshot(Closure done);

    /** The current voting members, as this node knows them. */
    List<PeerId> listPeers();

    NodeStatus status();

    /**
     * Completes once this node's term or the leader it knows differs from {@code term} and
     * {@code leader} (null: no leader), at once if it already does or the node has stopped: a way
     * to wait for an election's outcome without asking again and again while it runs. It
     * completes on a node thread, so its continuations must not block; a caller that stops
     * waiting cancels it. Read {@link #status()} again when it completes: the change may be a
     * new term with no leader yet.
     */
    java.util.concurrent.CompletableFuture<Void> leaderChange(long term, PeerId leader);

    /** Stops the node; pending closures fail with SHUTTING_DOWN. {@code done} may be null. */
    void shutdown(Closure done);

    /** Waits until shutdown has finished. */
    void join() throws InterruptedException;
}
