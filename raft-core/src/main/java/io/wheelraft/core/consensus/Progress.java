package io.wheelraft.core.consensus;

/**
 * The leader's view of one follower (or learner): how far its log matches, where to send next,
 * and how many appends are in flight. Owned by the leader's lane.
 *
 * <p>States: PROBE sends one append at a time until the follower's position is found;
 * REPLICATE pipelines up to the in-flight window, advancing {@code next} optimistically;
 * SNAPSHOT sends no appends while the shell streams a snapshot (the entry before {@code next}
 * was compacted away), only heartbeats.
 */
final class Progress {

    enum State { PROBE, REPLICATE, SNAPSHOT }

    long match;
    long next;
    State state = State.PROBE;
    /** Appends carrying entries sent and not yet answered (the pipelining window). */
    int inflight;
    /** In PROBE, an append is out and we wait for its answer before sending another, or the last one failed and we wait for a heartbeat answer. */
    boolean probeOutstanding;
    /** Clock (ms) of the last answer of any kind in the current term; check-quorum uses it. */
    long lastResponseMs;
    /** It has answered this leader at least once (check-quorum may then count its live process, see {@link Replication#quorumRecentlyActive}). */
    boolean answered;
    /** Sequence of the last append sent; answers echo it. */
    long sequence;
    /** Highest heartbeat round this follower answered in the current term. */
    long ackedRound;
    /** The latest heartbeat-timer round (not a read round) it answered: the lease counts from these. */
    long ackedLeaseRound;
    /**
     * The heartbeat-timer round last sent to it and not answered or failed yet (0: none), and when
     * it was sent: the next timer round skips a follower that has not answered the last one
     * ({@link Replication#heartbeatAll}).
     */
    long heartbeatUnanswered;
    long heartbeatSentMs;
    /** The election priority the follower's own options give it, from its answers ({@link ElectionPriority#UNKNOWN}: not heard). */
    int advertisedPriority = ElectionPriority.UNKNOWN;

    Progress(long next, long nowMs) {
        this.next = next;
        this.lastResponseMs = nowMs;
    }

    void becomeProbe() {
        state = State.PROBE;
        inflight = 0;
        probeOutstanding = false;
        next = Math.max(next, match + 1);
    }

    void becomeReplicate() {
        state = State.REPLICATE;
        probeOutstanding = false;
        next = Math.max(next, match + 1);
    }

    void becomeSnapshot() {
        state = State.SNAPSHOT;
        inflight = 0;
        probeOutstanding = false;
    }

    boolean canSend(int maxInflight) {
        return switch (state) {
            case PROBE -> !probeOutstanding;
            case REPLICATE -> inflight < maxInflight;
            case SNAPSHOT -> false;
        };
    }

    @Override
    public String toString() {
        return "Progress{match=" + match + ", next=" + next + ", " + state + ", inflight=" + inflight + "}";
    }
}
