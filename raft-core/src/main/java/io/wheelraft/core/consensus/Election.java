package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node of {@link RaftCore} gets a leader: noticing the leader is lost (silence or a broken
 * connection), pre-vote (thesis §9.6), candidacy and the vote round (§5.2), answering others'
 * requests (§5.4.1, §4.2.3 disruptive servers), split-vote yielding and retries. Term, vote and
 * role stay in the core, which this changes only through its transitions. Not thread-safe: owned
 * by the core, on the node's Raft lane.
 */
final class Election {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);
    /** Lines that repeat every retry while no quorum answers (e.g. the majority is down). */
    private final RateLimitedLog preVoteLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private final RateLimitedLog lostRoundLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private final RateLimitedLog voteTimeoutLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final RaftCore core;
    private final RaftConfig config;
    private final PeerId self;
    /** When we last granted a real vote (pre-votes are held back briefly after it). */
    private long lastVoteGrantMs = Long.MIN_VALUE / 2;
    /** When the transport said the leader's connection broke; -1 when it has not (since the last contact). */
    private long leaderConnectionLostMs = -1;
    private VoteTally tally;
    /** Stops a node removed from the group from campaigning (see RemovedMember). */
    private final RemovedMember removed;

    Election(RaftCore core, RaftConfig config) {
        this.core = core;
        this.config = config;
        this.self = config.self();
        this.removed = new RemovedMember(self);
    }

    /** The round in progress (if any) is over: the node became a follower of some term, or leader. */
    void endRound() {
        tally = null;
    }

    /** A leader of our term spoke: a reported break of its connection is old news. */
    void leaderHeard() {
        leaderConnectionLostMs = -1;
    }

    /** A leader's message was accepted: also lifts the removed-member hold. */
    void leaderContact() {
        leaderConnectionLostMs = -1;
        removed.leaderContact();
    }

    /**
     * Has this follower lost its leader: silent for an election timeout, or its connection broke
     * and the first candidate's wait ({@link #firstCandidateWaitMs}) passed?
     */
    boolean leaderLost(long nowMs) {
        return leaderLostAfter(nowMs, firstCandidateWaitMs());
    }

    /**
     * How long after its own report of the broken leader connection the first follower may
     * campaign: three quarters of the grace. Voters back a candidate after half the grace
     * ({@link #leaderLostForVoting}); the quarter between covers followers hearing of the same
     * break at different moments (2-40 ms in the chaos runs, against 50 ms at T = 1000).
     */
    private long firstCandidateWaitMs() {
        return config.connectionLostGraceMs() * 3L / 4;
    }

    /**
     * After the leader's connection broke, how long this follower waits before its pre-vote:
     * {@link #firstCandidateWaitMs}, plus half a grace for every surviving voter that comes before
     * it by id. The followers so campaign one after the other, the next only if the one before
     * has not won (winning takes one pre-vote and one vote round trip, well under half a grace).
     * Random waits in [grace, 1.5 grace) used to tie now and then, and both the wait and a tie
     * (a split vote) cost a quarter to half of the failover time. A first candidate whose log is
     * behind cannot win, but the voter ahead of it campaigns as soon as it refuses it. The shell
     * adds a little jitter.
     */
    long campaignDelayAfterBreakMs() {
        int before = 0;
        for (PeerId p : core.membership().voters()) {
            if (!p.equals(self) && !p.equals(core.leader()) && p.compareTo(self) < 0) {
                before++;
            }
        }
        return firstCandidateWaitMs() + before * (config.connectionLostGraceMs() / 2L);
    }

    /**
     * Whether, as a voter, we back a candidate against our leader. The candidate has waited at
     * least three quarters of the grace after its own break report; a voter that saw the same
     * break a little later must not refuse it for that, so it only needs half the grace.
     */
    private boolean leaderLostForVoting(long nowMs) {
        return leaderLostAfter(nowMs, config.connectionLostGraceMs() / 2);
    }

    private boolean leaderLostAfter(long nowMs, long graceMs) {
        if (nowMs - core.lastLeaderContactMs() >= config.electionTimeoutMs()) {
            return true;
        }
        return leaderConnectionLostMs >= 0 && nowMs - leaderConnectionLostMs >= graceMs;
    }

    /** voteTimer fired: the vote round did not finish; step back and try again from pre-vote. */
    void onVoteTimeout(long nowMs) {
        if (core.role() == Role.CANDIDATE) {
            voteTimeoutLog.info(nowMs, "{} vote round of term {} timed out; retrying from pre-vote", self, core.term());
            core.becomeFollower(core.term(), null, nowMs);
            startPreVote(nowMs);
        }
    }

    /**
     * The transport says the connection to {@code endpoint} broke.
     *
     * @return true if it was our leader's: the shell then re-checks after {@link #campaignDelayAfterBreakMs}
     */
    boolean onConnectionLost(String endpoint, long nowMs) {
        if (core.role() == Role.LEADER || core.role() == Role.CANDIDATE || core.repairing() || core.leader() == null || !core.leader().endpoint().equals(endpoint)) {
            return false;
        }
        if (leaderConnectionLostMs >= 0) {
            return false; // the same break reported again (e.g. by both directions): keep the first
        }
        leaderConnectionLostMs = nowMs;
        return true;
    }

    /**
     * This follower's wait after a broken leader connection ({@link #campaignDelayAfterBreakMs})
     * passed. A pre-vote already under way (started early because a peer behind us asked for
     * our vote) is left to finish.
     */
    void onConnectionLostGraceElapsed(long nowMs) {
        if (core.role() != Role.LEADER && core.role() != Role.CANDIDATE && leaderLost(nowMs) && !preVoting()) {
            startPreVote(nowMs);
        }
    }

    /** Is a pre-vote round of ours still waiting for answers? */
    boolean preVoting() {
        VoteTally t = tally;
        return t != null && t.preVote && t.term == core.term() + 1 && t.outcome(core.membership()) == VoteTally.Outcome.PENDING;
    }

    void startPreVote(long nowMs) {
        Membership m = core.membership();
        if (core.repairing() || !removed.mayCampaign(m)) {
            return; // a fenced node may lack committed entries: it must not lead; a removed one is not a member
        }
        tally = new VoteTally(true, core.term() + 1, self);
        preVoteLog.info(nowMs, "{} starts pre-vote for term {} (last log {}/{})", self, core.term() + 1, core.log().lastIndex(), core.log().lastTerm());
        if (tally.outcome(m) == VoteTally.Outcome.WON) {
            becomeCandidate(nowMs, false);
            return;
        }
        broadcastVote(true, core.term() + 1, false);
    }

    private void becomeCandidate(long nowMs, boolean leadershipTransfer) {
        // The broken-connection flag stays: if this round fails (or we yield a split vote) the old
        // leader is still gone, and we must back the next candidate without waiting out T.
        if (core.repairing()) {
            return;
        }
        // Durable first: if the write fails nothing of the new term exists, here or on the wire.
        core.enterNextTerm();
        tally = new VoteTally(false, core.term(), self);
        LOG.info("{} campaigns in term {}", self, core.term());
        if (tally.outcome(core.membership()) == VoteTally.Outcome.WON) {
            core.becomeLeader(nowMs);
            return;
        }
        broadcastVote(false, core.term(), leadershipTransfer);
    }

    private void broadcastVote(boolean preVote, long voteTerm, boolean transfer) {
        for (PeerId p : core.membership().voters()) {
            if (p.equals(self)) {
                continue;
            }
            core.out().send(new Ready.VoteRequest(p, RequestVoteRequest.newBuilder()
                    .setGroupId(config.groupId())
                    .setServerId(self.toString())
                    .setPeerId(p.toString())
                    .setTerm(voteTerm)
                    .setLastLogIndex(core.log().lastIndex())
                    .setLastLogTerm(core.log().lastTerm())
                    .setPreVote(preVote)
                    .setLeadershipTransfer(transfer)
                    .build()));
        }
    }

    /** Answers a RequestVote or pre-vote (§5.2, §5.4.1, thesis §9.6 and §4.2.3). */
    RequestVoteResponse handleRequestVote(RequestVoteRequest req, long nowMs) {
        PeerId candidate = PeerId.parse(req.getServerId());
        if (core.repairing()) {
            // It may have acknowledged entries its log lost: its vote could elect a leader lacking them.
            return voteResponse(req.getPreVote(), false, "repairing after a storage fault; not voting until repaired");
        }
        boolean logOk = core.log().isUpToDate(req.getLastLogIndex(), req.getLastLogTerm());
        if (req.getPreVote()) {
            // Right after granting a vote, give that candidate time to win and announce itself
            // before backing anyone else (it would otherwise be deposed in the window between our
            // grant and its first append).
            boolean grant = req.getTerm() > core.term() && logOk && core.role() != Role.LEADER && leaderLostForVoting(nowMs)
                    && (nowMs - lastVoteGrantMs >= config.electionTimeoutMs() / 2 || candidate.equals(core.votedFor()));
            RequestVoteResponse answer = voteResponse(true, grant, grant ? "" : VoteTally.preVoteRefusal(req.getTerm(), core.term(), logOk,
                    leaderLostForVoting(nowMs), core.role() == Role.LEADER, core.leader()));
            long removedAt = grant ? 0 : RemovedMember.removedAt(candidate, core.membership(), core.commitIndex());
            if (removedAt > 0) {
                return answer.toBuilder().setCandidateRemovedAtIndex(removedAt)
                        .setReason("not a member of the configuration committed at index " + removedAt).build();
            }
            if (!grant && !logOk && req.getTerm() > core.term() && core.role() == Role.FOLLOWER && leaderLostForVoting(nowMs) && !preVoting()) {
                // A peer behind us wants to replace the lost leader; it cannot win, and we hold
                // entries it lacks. Campaign now rather than when our own timer fires: otherwise
                // about half of all failovers (whenever the less up-to-date follower's timer fires
                // first) wait for that timer on top of the failed round.
                LOG.info("{} refused the pre-vote of {} (log behind ours); starting its own", self, candidate);
                startPreVote(nowMs);
            }
            return answer;
        }
        if (req.getTerm() < core.term()) {
            return voteResponse(false, false, "stale term " + req.getTerm() + " < " + core.term());
        }
        // Disruptive-server guard: while we hear from a live leader, a vote request does not even
        // bump our term, unless it comes from a leader transfer the leader itself started.
        // A node that just started counts its start as contact: it may have acknowledged a
        // heartbeat just before a restart, and the old leader's lease relies on that.
        if (!req.getLeadershipTransfer() && req.getTerm() > core.term() && (core.role() == Role.LEADER || !leaderLostForVoting(nowMs))) {
            return voteResponse(false, false, core.leader() == null ? "heard from a leader (or started) recently" : "a live leader " + core.leader() + " is known");
        }
        if (req.getTerm() > core.term()) {
            core.becomeFollower(req.getTerm(), null, nowMs);
        }
        boolean canVote = core.votedFor() == null || core.votedFor().equals(candidate);
        if (canVote && logOk && core.role() != Role.LEADER) {
            if (core.votedFor() == null) {
                core.recordVote(candidate); // durable before the grant leaves
            }
            // Unlike §5.2 we do not restart our own wait here: "last contact" means a real leader
            // (or our start), and it is what refuses disruptive candidates, so a grant must not
            // make us refuse the next candidate if this one fails. Pre-vote already keeps us from
            // disrupting the candidate we voted for. The broken-connection shortcut does end: it
            // was about the old leader, and would otherwise depose the new one.
            leaderConnectionLostMs = -1;
            lastVoteGrantMs = nowMs;
            return voteResponse(false, true, "");
        }
        if (!canVote && logOk && core.role() == Role.CANDIDATE && self.equals(core.votedFor())
                && VoteTally.winsTie(req, candidate, core.log().lastTerm(), core.log().lastIndex(), self)) {
            // A split vote between us: rather than both waiting out the round (a hung voter only
            // answers by timing out), the weaker candidate stands down now and backs the stronger.
            LOG.info("{} yields term {} to {}", self, core.term(), candidate);
            core.becomeFollower(core.term(), null, nowMs);
            return voteResponse(false, false, "split vote; yielding").toBuilder().setVoterYields(true).build();
        }
        return voteResponse(false, false, canVote ? "candidate log is behind" : "already voted for " + core.votedFor());
    }

    private RequestVoteResponse voteResponse(boolean preVote, boolean granted, String reason) {
        return RequestVoteResponse.newBuilder().setTerm(core.term()).setGranted(granted).setPreVote(preVote).setReason(reason).build();
    }

    /**
     * A (pre-)vote request got no answer (peer unreachable or timed out). For deciding when a round
     * is lost it counts as a refusal; it never counts towards winning.
     */
    void handleRequestVoteFailure(PeerId to, RequestVoteRequest req, long nowMs) {
        handleRequestVoteResponse(to, req, voteResponse(req.getPreVote(), false, "no answer"), nowMs);
    }

    /** The short retry pause after a lost round ended: try again if the leader is still lost. */
    void onElectionRetry(long nowMs) {
        if (core.role() == Role.FOLLOWER && tally == null && leaderLost(nowMs)) {
            startPreVote(nowMs);
        }
    }

    /** Handles an answer to our RequestVote or pre-vote. */
    void handleRequestVoteResponse(PeerId from, RequestVoteRequest req, RequestVoteResponse resp, long nowMs) {
        if (resp.getTerm() > core.term() && !resp.getGranted()) {
            core.becomeFollower(resp.getTerm(), null, nowMs);
            return;
        }
        if (resp.getVoterYields() && !req.getPreVote() && core.role() == Role.CANDIDATE && req.getTerm() == core.term()) {
            LOG.info("{}: {} yielded the split vote of term {}; campaigning again", self, from, core.term());
            core.becomeFollower(core.term(), null, nowMs);
            startPreVote(nowMs);
            return;
        }
        VoteTally t = tally;
        if (t == null || t.preVote != req.getPreVote() || t.term != req.getTerm()) {
            return; // an answer to an older round
        }
        if (t.preVote && core.role() == Role.FOLLOWER && removed.toldRemoved(from, resp.getCandidateRemovedAtIndex(), core.membership())) {
            tally = null; // no retry: RemovedMember keeps us from campaigning until a leader calls
            return;
        }
        if (t.preVote ? core.role() == Role.CANDIDATE || core.role() == Role.LEADER : core.role() != Role.CANDIDATE || core.term() != req.getTerm()) {
            return;
        }
        t.record(from, resp.getGranted());
        switch (t.outcome(core.membership())) {
            case WON -> {
                if (t.preVote) {
                    becomeCandidate(nowMs, false);
                } else {
                    core.becomeLeader(nowMs);
                }
            }
            case LOST -> {
                lostRoundLog.info(nowMs, "{} lost {} for term {}", self, t.preVote ? "pre-vote" : "vote", t.term);
                tally = null;
                if (!t.preVote) {
                    core.becomeFollower(core.term(), null, nowMs);
                }
                // Retry after a short random pause instead of a whole election timeout: a split
                // vote or a voter that heard the old leader a little later resolves quickly.
                core.out().retryElection();
            }
            case PENDING -> { }
        }
    }

    /** TimeoutNow from the leader (leader transfer): campaign at once, skipping pre-vote. */
    TimeoutNowResponse handleTimeoutNow(TimeoutNowRequest req, long nowMs) {
        if (req.getTerm() != core.term() || core.role() != Role.FOLLOWER || !core.membership().isVoter(self)) {
            return TimeoutNowResponse.newBuilder().setTerm(core.term()).setSuccess(false).build();
        }
        becomeCandidate(nowMs, true);
        return TimeoutNowResponse.newBuilder().setTerm(core.term()).setSuccess(true).build();
    }

}
