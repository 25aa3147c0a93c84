package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

/**
 * A pre-vote we refused only because the asker's log is behind ours, kept as that asker's
 * pre-vote for us.
 *
 * <p>Why: after a leader dies, the survivor that sees the break first often holds the shorter
 * log (the two followers' logs differ by what was in flight). Its pre-vote is refused by the
 * other survivor, which then runs a pre-vote round of its own; on a loaded machine that round
 * trip is 20-50 ms of the failover. But the refused request already says what that round would
 * ask: the asker, in our term, believes the leader lost (it would not pre-vote otherwise), and
 * our log is at least as good as its own, so it would grant our pre-vote. In a group of three
 * that grant and ours are a quorum, and we campaign at once.
 *
 * <p>Safety does not rest on pre-votes: a real vote is still granted only by a voter whose own
 * hold after the old leader's last heartbeat has passed (the lease), and we become candidate only
 * once ours has. A wrong belief costs a failed real round and the retry pause after it (100-400
 * ms at T = 1000, measured), so only a request that is sure to be current counts: one that says
 * the asker found the leader's process gone (its own wait for a flapping connection is over, so
 * it answers a real vote now), for the next term, that arrived after we last heard a leader (not
 * one left over from an earlier failover) and at most half an election timeout ago.
 */
final class ImpliedPreVote {

    private PeerId from;
    private long term = -1;
    private long atMs;

    /** {@code asker} asked for our pre-vote for {@code term} at {@code nowMs}; its log was behind ours. */
    void keep(PeerId asker, long term, long nowMs) {
        this.from = asker;
        this.term = term;
        this.atMs = nowMs;
    }

    /**
     * The asker whose request counts as its pre-vote for our round for {@code term}, or null; used
     * once. Only a request for that same term, that came after {@code lastLeaderContactMs} and is
     * no older than {@code maxAgeMs}, counts.
     */
    PeerId take(long term, long lastLeaderContactMs, long nowMs, long maxAgeMs) {
        PeerId asker = this.term == term && atMs >= lastLeaderContactMs && nowMs - atMs <= maxAgeMs ? from : null;
        from = null;
        this.term = -1;
        return asker;
    }
}
