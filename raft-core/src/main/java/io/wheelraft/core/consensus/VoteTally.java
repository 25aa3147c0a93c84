package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

import java.util.HashSet;
import java.util.Set;

/**
 * Answers collected in one (pre-)vote round. A round is decided as soon as a quorum granted or a
 * quorum can no longer be reached; it never waits for the slowest (or a dead) peer.
 */
final class VoteTally {

    enum Outcome { PENDING, WON, LOST }

    final boolean preVote;
    /** The term the round campaigns for (for pre-vote, the term it would use). */
    final long term;
    private final Set<PeerId> granted = new HashSet<>();
    private final Set<PeerId> denied = new HashSet<>();
    /** Whether any other voter answered (granted or refused), rather than failing or timing out. */
    private boolean answered;

    VoteTally(boolean preVote, long term, PeerId self) {
        this.preVote = preVote;
        this.term = term;
        granted.add(self);
    }

    /** @param answer false: the voter did not answer (unreachable, not hosting the group, timed out); counts as a refusal */
    void record(PeerId voter, boolean grant, boolean answer) {
        if (granted.contains(voter) || denied.contains(voter)) {
            return; // a duplicated answer counts once
        }
        (grant ? granted : denied).add(voter);
        answered |= answer;
    }

    /** Did no other voter answer at all (every one failed or timed out)? */
    boolean noneAnswered() {
        return !answered;
    }

    Outcome outcome(Membership m) {
        if (m.hasQuorum(granted::contains)) {
            return Outcome.WON;
        }
        return m.quorumStillPossible(denied::contains) ? Outcome.PENDING : Outcome.LOST;
    }

    /** Tie-break between two candidates of one term: the more up-to-date log, then the lower id. */
    static boolean winsTie(io.wheelraft.proto.RequestVoteRequest req, io.wheelraft.core.PeerId candidate, long myLastTerm,
                           long myLastIndex, io.wheelraft.core.PeerId self) {
        if (req.getLastLogTerm() != myLastTerm) {
            return req.getLastLogTerm() > myLastTerm;
        }
        if (req.getLastLogIndex() != myLastIndex) {
            return req.getLastLogIndex() > myLastIndex;
        }
        return candidate.compareTo(self) < 0;
    }

    /** Why a pre-vote for {@code askedTerm} was refused, for the answer's reason. */
    static String preVoteRefusal(long askedTerm, long term, boolean logOk, boolean leaderLost, boolean leading,
                                 io.wheelraft.core.PeerId leader) {
        if (askedTerm <= term) {
            return "stale term " + askedTerm + " <= " + term;
        }
        if (!logOk) {
            return "candidate log is behind";
        }
        if (leaderLost) {
            return "just voted; giving that candidate time to win";
        }
        return leading ? "I am the leader" : "leader " + leader + " still alive";
    }
}
