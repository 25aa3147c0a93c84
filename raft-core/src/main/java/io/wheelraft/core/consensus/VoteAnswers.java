package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node of {@link RaftCore} answers other nodes' RequestVote and pre-vote requests (§5.2,
 * §5.4.1, thesis §9.6 and §4.2.3): granting or refusing, holding a pre-vote answer while it
 * confirms the leader is lost ({@link HeldVotes}), and what a refusal of a candidate whose log
 * is behind ours starts here (our own campaign, or {@link ImpliedPreVote}). It exists apart from
 * {@link Election}, which runs this node's own campaigns, because answering is a separate job
 * with its own state (grants, held answers, refused-as-behind bookkeeping); both read when the
 * leader counts as lost from its {@link LeaderLiveness}. Not thread-safe: owned by the core, on the
 * node's Raft lane.
 */
final class VoteAnswers {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);
    // One line per interval for all groups of the process (then a count): a failover of thousands
    // of groups made these a line per group, thousands in a second.
    private static final RateLimitedLog STAND_ASIDE_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private static final RateLimitedLog BEHIND_PRE_VOTE_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private static final RateLimitedLog YIELD_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final RaftCore core;
    private final RaftConfig config;
    private final PeerId self;
    private final Election election;
    /** Whether our own leader counts as lost for backing a candidate. */
    private final LeaderLiveness liveness;
    /** When we last granted a real vote (pre-votes are held back briefly after it). */
    private long lastVoteGrantMs = Long.MIN_VALUE / 2;
    /** Pre-vote answers held while we confirm the leader is lost. */
    private final HeldVotes held = new HeldVotes();
    /**
     * When a candidate whose log is behind ours asked for our pre-vote because the leader's
     * connection broke, before we saw the break ourselves: seeing it soon after, we campaign at
     * the end of our hold rather than at our later turn (the candidate cannot win).
     */
    private long behindAskedBeforeBreakMs = Long.MIN_VALUE / 2;
    /** When we last granted or held another node's pre-vote: it is campaigning, so our own turn waits. */
    private long lastPreVoteBackedMs = Long.MIN_VALUE / 2;
    /** A pre-vote request refused for its shorter log, counted as the asker's pre-vote in our next round. */
    private final ImpliedPreVote implied = new ImpliedPreVote();

    VoteAnswers(RaftCore core, RaftConfig config, Election election, LeaderLiveness liveness) {
        this.core = core;
        this.config = config;
        this.self = config.self();
        this.election = election;
        this.liveness = liveness;
    }

    /**
     * Another node is campaigning: we hold its pre-vote answer, granted one lately (within two
     * slots), or gave it our vote of this term and no leader has spoken since, within half an
     * election timeout (the window {@link #preVote} also gives it before backing anyone else).
     * Our own turn then waits for its outcome (an election retry checks again later). Without the
     * last, a voter whose retry fired between its grant and the winner's first heartbeat ran its
     * own pre-vote, which the still-candidate winner granted, and its next term deposed the new
     * leader: after a kill at 1,000 groups, where a vote round took half a second, many groups
     * went through three or four terms.
     */
    boolean backsAnotherCandidate(long nowMs) {
        return !held.isEmpty() || nowMs - lastPreVoteBackedMs < 2 * config.failoverSlotMs() || awaitsTheCandidateItVotedFor(nowMs);
    }

    private boolean awaitsTheCandidateItVotedFor(long nowMs) {
        PeerId voted = core.votedFor();
        return voted != null && !voted.equals(self) && core.leader() == null && core.lastLeaderContactMs() <= lastVoteGrantMs
                && nowMs - lastVoteGrantMs < config.electionTimeoutMs() / 2;
    }

    /** Did a candidate behind us ask, citing the leader's broken connection, within a confirmation window before {@code nowMs}? */
    boolean behindAskedJustBefore(long nowMs) {
        return nowMs - behindAskedBeforeBreakMs <= config.voteConfirmWindowMs();
    }

    /** The asker of a pre-vote we refused as behind, if it counts as its pre-vote for our round now (see {@link ImpliedPreVote}). */
    PeerId takeImpliedPreVote(long term, long lastLeaderContactMs, long nowMs, long maxAgeMs) {
        return implied.take(term, lastLeaderContactMs, nowMs, maxAgeMs);
    }

    /** No pre-vote answer is held. */
    boolean holdsNone() {
        return held.isEmpty();
    }

    /** When the earliest held answer is due; MAX_VALUE if none. */
    long earliestHeldDeadlineMs() {
        return held.earliestDeadlineMs();
    }

    /** How many pre-vote answers are held (for tests). */
    int heldCount() {
        return held.size();
    }

    /**
     * Decides held pre-vote answers: granted (or refused for another reason) once the leader is
     * lost for voting; refused once their deadline passed, or at once if the leader spoke. A
     * voter that saw the break itself but whose hold after the last contact has not passed yet
     * keeps holding until then.
     */
    void decideHeld(long nowMs, boolean leaderSpoke) {
        if (held.isEmpty()) {
            return;
        }
        for (HeldVotes.Held h : held.takeAll()) {
            if (!leaderSpoke && !liveness.lostForVoting(nowMs)) {
                long lostAt = liveness.lostForVotingAtMs();
                if (liveness.sawConnectionBreak() && lostAt > h.deadlineMs) {
                    h.deadlineMs = lostAt; // saw the break; only the lease hold is left (at most half a grace)
                }
                if (nowMs < h.deadlineMs) {
                    held.keep(h);
                    continue;
                }
            }
            RequestVoteResponse answer = preVote(h.request, PeerId.parse(h.request.getServerId()), nowMs, null);
            LOG.debug("{} answers its held pre-vote for {}: {}", core.label(), h.request.getServerId(), answer.getGranted() ? "granted" : answer.getReason());
            core.out().event(new Ready.VoteAnswered(h.replyTo, answer));
            if (answer.getGranted()) {
                lastPreVoteBackedMs = nowMs;
            }
        }
    }

    /**
     * Answers a RequestVote or pre-vote (§5.2, §5.4.1, thesis §9.6 and §4.2.3).
     *
     * @param replyTo where a held pre-vote answer goes later, through {@link Ready.VoteAnswered};
     *                null: never hold, answer now
     * @return the answer, or null if the pre-vote answer is held
     */
    RequestVoteResponse answer(RequestVoteRequest req, long nowMs, VoteReply replyTo) {
        PeerId candidate = PeerId.parse(req.getServerId());
        if (ElectionPriority.configuredNeverLeads(core.membership(), candidate)) {
            // Only liveness rides on this (refusing is always safe): the configuration says it never leads.
            return voteResponse(req.getPreVote(), false, "the configuration gives " + candidate + " election priority 0 (or makes it a witness)");
        }
        if (core.repairing()) {
            // It may have acknowledged entries its log lost: its vote could elect a leader lacking them.
            return voteResponse(req.getPreVote(), false, "repairing after a storage fault; not voting until repaired");
        }
        String witness = WitnessRules.voteRefusal(candidate, core.membership());
        if (witness != null) {
            return voteResponse(req.getPreVote(), false, witness); // defence in depth: a witness never campaigns
        }
        if (req.getPreVote()) {
            return preVote(req, candidate, nowMs, replyTo);
        }
        return vote(req, candidate, nowMs);
    }

    /**
     * A pre-vote: granted if the candidate's log is up to date and we lost the leader too. If the
     * only reason to refuse is that we have not seen the leader lost yet, and we may within a
     * short window (the candidate says the connection broke, or our own timeout is due), the
     * answer is held ({@link #holdDeadlineMs}) when {@code replyTo} allows it.
     */
    private RequestVoteResponse preVote(RequestVoteRequest req, PeerId candidate, long nowMs, VoteReply replyTo) {
        if (!liveness.processGone() && core.leader() != null && core.role() == Role.FOLLOWER && claimsOurLeaderGone(req)) {
            // The candidate saw our leader's connection break and its address refuse a new one. Our
            // own report of the break may still be on its way (a busy or freshly started process
            // hears of it tens of ms later): take the candidate's word for both.
            liveness.takeWordThatLeaderIsGone(nowMs);
            LOG.debug("{} takes {}'s word that leader {}'s process is gone", core.label(), candidate, core.leader());
        }
        if (election.preVoting() && req.getTerm() == election.roundTerm()) {
            // Two survivors pre-vote at once (their turns came from different heartbeat rounds, or
            // no turn was known). Both would pass and split the vote: the weaker stands aside and
            // backs the stronger (better log, then lower id), which refuses it in turn.
            if (!VoteTally.winsTie(req, candidate, core.log().lastTerm(), core.log().lastIndex(), self)) {
                return voteResponse(true, false, "competing pre-vote of term " + election.roundTerm() + " with a log at least as good");
            }
            STAND_ASIDE_LOG.info(nowMs, "{} stands aside from its pre-vote for term {}: {} competes with a stronger claim", core.label(), election.roundTerm(), candidate);
            election.standAside();
            core.out().retryElection(); // checks again after that round, in case it fails
        }
        boolean logOk = core.log().isUpToDate(req.getLastLogIndex(), req.getLastLogTerm());
        // Right after granting a vote, give that candidate time to win and announce itself
        // before backing anyone else (it would otherwise be deposed in the window between our
        // grant and its first append). Once a leader spoke since, that election is over; so it is
        // when the candidate we voted for yielded that term to this one (a split vote): without
        // that, a rival that had already collected our votes could not be replaced for T/2.
        boolean votedForTheRivalThatYielded = votedForTheRivalThatYielded(req);
        boolean backable = req.getTerm() > core.term() && logOk && core.role() != Role.LEADER
                && (nowMs - lastVoteGrantMs >= config.electionTimeoutMs() / 2 || core.lastLeaderContactMs() > lastVoteGrantMs
                    || candidate.equals(core.votedFor()) || votedForTheRivalThatYielded);
        boolean lost = liveness.lostForVoting(nowMs) || votedForTheRivalThatYielded;
        if (backable && !lost && replyTo != null) {
            long deadline = holdDeadlineMs(req, nowMs);
            if (deadline > nowMs) {
                held.add(req, replyTo, deadline);
                lastPreVoteBackedMs = nowMs;
                LOG.debug("{} holds its pre-vote answer to {} until {} (leader {} not lost yet)", core.label(), candidate, deadline, core.leader());
                return null;
            }
        }
        boolean grant = backable && lost;
        if (grant) {
            lastPreVoteBackedMs = nowMs;
        }
        RequestVoteResponse answer = voteResponse(true, grant, grant ? "" : VoteTally.preVoteRefusal(req.getTerm(), core.term(), logOk,
                lost, core.role() == Role.LEADER, core.leader()));
        long removedAt = grant ? 0 : RemovedMember.removedAt(candidate, core.membership(), core.commitIndex());
        if (removedAt > 0) {
            return answer.toBuilder().setCandidateRemovedAtIndex(removedAt)
                    .setReason("not a member of the configuration committed at index " + removedAt).build();
        }
        boolean refusedAsBehind = !grant && !logOk && req.getTerm() > core.term() && core.role() == Role.FOLLOWER;
        boolean behindNeedsUs = refusedAsBehind && candidateCannotWinWithoutUs();
        if (refusedAsBehind && req.getTerm() == core.term() + 1 && req.getLeaderProcessGone()) {
            implied.keep(candidate, req.getTerm(), nowMs); // see ImpliedPreVote: our own round may count it
        }
        if (behindNeedsUs && lost && !election.preVoting() && !backsAnotherCandidate(nowMs) && !WitnessRules.neverLeads(config, core.membership())) {
            // A peer behind us wants to replace the lost leader; it cannot win, and we hold
            // entries it lacks. Campaign now rather than at our own turn (unless we already back
            // another survivor's pre-vote: two rounds at once could split the vote).
            BEHIND_PRE_VOTE_LOG.info(nowMs, "{} refused the pre-vote of {} (log behind ours); starting its own", core.label(), candidate);
            election.startPreVote(nowMs);
        } else if (behindNeedsUs && req.getLeaderConnectionBroke() && liveness.sawConnectionBreak() && !lost) {
            // The same, but our own hold after the break is not over yet: campaign when it is,
            // rather than a slot later at our own turn.
            election.campaignWhenOwnHoldEnds();
        } else if (behindNeedsUs && req.getLeaderConnectionBroke() && !liveness.sawConnectionBreak()) {
            // The same, but the candidate's break report came before ours (see onConnectionLost).
            behindAskedBeforeBreakMs = nowMs;
        }
        return answer;
    }

    /**
     * A pre-vote of a candidate that was in our term (so followed the same leader), saw that
     * leader's connection break, and found its process gone. Taking its word spares only the
     * wait for a heartbeat that would prove a flap: liveness, since a wrong word (a firewall that
     * answers with resets) costs an election, never safety, because the lease part of our hold is
     * our own (see {@link LeaderLiveness#lostForVotingAtMs}).
     */
    private boolean claimsOurLeaderGone(RequestVoteRequest req) {
        return req.getPreVote() && req.getLeaderConnectionBroke() && req.getLeaderProcessGone() && req.getTerm() == core.term() + 1;
    }

    /**
     * A candidate whose log is behind ours cannot win without our vote: the voters other than us
     * and our (lost) leader make no quorum, as in a group of three. Then we campaign at once
     * rather than at our turn. In a larger group it may win with the others (whose logs are not
     * ahead of its own): a round of ours next to it would split the vote, so we keep our turn.
     */
    private boolean candidateCannotWinWithoutUs() {
        PeerId leader = core.leader();
        return !core.membership().quorumStillPossible(p -> p.equals(self) || p.equals(leader));
    }

    /**
     * Until when to hold a pre-vote answer we would give if we saw the leader lost, or a time not
     * after {@code nowMs} if not worth holding: we saw the break and only the hold after the last
     * contact is left (at most half a grace); the candidate saw the break and we have not (yet):
     * a confirmation window; or our own election timeout passes within that window (a silent
     * leader: the candidate's last contact was a little earlier than ours).
     */
    private long holdDeadlineMs(RequestVoteRequest req, long nowMs) {
        if (liveness.sawConnectionBreak()) {
            return liveness.lostForVotingAtMs();
        }
        long window = config.voteConfirmWindowMs();
        if (req.getLeaderConnectionBroke()) {
            return nowMs + window;
        }
        long silentAt = core.lastLeaderContactMs() + config.electionTimeoutMs();
        return silentAt - nowMs <= window ? silentAt : nowMs;
    }

    /**
     * The request names the candidate we voted for in our current term as having yielded that
     * term to this one (a split vote), and no leader of our term spoke to us. That election is
     * over without a leader: our vote in it was given only once the old leader was lost for
     * voting, and no leader of this term can rest a lease on us, so we need not wait out the old
     * leader again (a granted vote ends the broken-connection path, see {@link #vote}).
     */
    private boolean votedForTheRivalThatYielded(RequestVoteRequest req) {
        return !req.getYieldedBy().isEmpty() && req.getTerm() == core.term() + 1 && core.leader() == null
                && core.votedFor() != null && core.votedFor().toString().equals(req.getYieldedBy());
    }

    /** A real vote (§5.2, §5.4.1), behind the disruptive-server guard (§4.2.3). */
    private RequestVoteResponse vote(RequestVoteRequest req, PeerId candidate, long nowMs) {
        boolean logOk = core.log().isUpToDate(req.getLastLogIndex(), req.getLastLogTerm());
        if (req.getTerm() < core.term()) {
            return voteResponse(false, false, "stale term " + req.getTerm() + " < " + core.term());
        }
        // Disruptive-server guard: while we hear from a live leader, a vote request does not even
        // bump our term, unless it comes from a leader transfer the leader itself started.
        // A node that just started counts its start as contact: it may have acknowledged a
        // heartbeat just before a restart, and the old leader's lease relies on that.
        if (!req.getLeadershipTransfer() && req.getTerm() > core.term()
                && (core.role() == Role.LEADER || !(liveness.lostForVoting(nowMs) || votedForTheRivalThatYielded(req)))) {
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
            liveness.forgetConnectionBreak();
            lastVoteGrantMs = nowMs;
            LOG.debug("{} grants its vote of term {} to {}", core.label(), core.term(), candidate);
            return voteResponse(false, true, "");
        }
        if (!canVote && logOk && core.role() == Role.CANDIDATE && self.equals(core.votedFor())
                && VoteTally.winsTie(req, candidate, core.log().lastTerm(), core.log().lastIndex(), self)) {
            // A split vote between us: rather than both waiting out the round (a hung voter only
            // answers by timing out), the weaker candidate stands down now and backs the stronger.
            YIELD_LOG.info(nowMs, "{} yields term {} to {}", core.label(), core.term(), candidate);
            core.becomeFollower(core.term(), null, nowMs);
            return voteResponse(false, false, "split vote; yielding").toBuilder().setVoterYields(true).build();
        }
        return voteResponse(false, false, canVote ? "candidate log is behind" : "already voted for " + core.votedFor());
    }

    RequestVoteResponse voteResponse(boolean preVote, boolean granted, String reason) {
        return RequestVoteResponse.newBuilder().setTerm(core.term()).setGranted(granted).setPreVote(preVote).setReason(reason).build();
    }
}
