package io.wheelraft.core.consensus;

import io.wheelraft.core.CampaignSlots;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.PreferredLeader;
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
 * connection), pre-vote (thesis §9.6), candidacy and the vote round (§5.2), split-vote yielding
 * and retries. Answering others' requests (§5.4.1, §4.2.3 disruptive servers) is
 * {@link VoteAnswers}'s job. Term, vote and role stay in the core, which this changes only
 * through its transitions. Not thread-safe: owned by the core, on the node's Raft lane.
 *
 * <p>Failover order: the leader tells each voter its turn (1, 2, ...: by election priority, then
 * log position, then id; see {@link ElectionPriority}; priority 0 never campaigns).
 * After a broken leader connection turn k pre-votes (k - 1) slots after the break; after a silent
 * leader, at the election timeout plus a small margin plus (k - 1) slots. A voter asked before it
 * sees the leader lost itself holds its pre-vote answer for a short window ({@link HeldVotes}).
 */
final class Election {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);
    /** Lines that repeat every retry while no quorum answers (e.g. the majority is down). */
    // One per process, not per node: a process hosting thousands of groups writes one line per
    // interval for all of them (saying how many were held back), not one per group.
    private static final RateLimitedLog PRE_VOTE_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private static final RateLimitedLog LOST_ROUND_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private static final RateLimitedLog VOTE_TIMEOUT_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    /** A failover at 10,000 groups starts thousands of campaigns in seconds: one line, then a count. */
    private static final RateLimitedLog CAMPAIGN_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    /** The shortcuts of a failover (an implied pre-vote, a yielded split vote) repeat per group too. */
    private static final RateLimitedLog IMPLIED_PRE_VOTE_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private static final RateLimitedLog YIELDED_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final RaftCore core;
    private final RaftConfig config;
    private final PeerId self;
    private VoteTally tally;
    /** Stops a node removed from the group from campaigning (see RemovedMember). */
    private final RemovedMember removed;
    /** Answers other nodes' (pre-)vote requests; reads from here when the leader counts as lost. */
    private final VoteAnswers answers;
    /** Whether the leader is lost, and from when this node may act on it. */
    private final LeaderLiveness liveness;
    /** When to start our own pre-vote early (a candidate behind us asked during our hold); MAX_VALUE: not planned. */
    private long campaignAtMs = Long.MAX_VALUE;
    /**
     * Our pre-vote won, but our own hold after the leader's last heartbeat has not passed yet:
     * when it does, we become candidate (our own vote counts like any voter's); MAX_VALUE: none.
     */
    private long candidacyAtMs = Long.MAX_VALUE;
    /**
     * The rival candidate that yielded a split term to us ({@code voter_yields}), and that term:
     * our rounds for the next term name it, so voters that voted for it back us at once.
     */
    private PeerId yieldedBy;
    private long yieldedTerm = -1;
    /** Until when this voter of a fresh group leaves the first campaign to the designated one (see {@link #waitsForFreshDesignated}). */
    private long freshGraceUntilMs = Long.MIN_VALUE;
    /** When this node, the designated first candidate of a fresh group, campaigns; MAX_VALUE: not planned. */
    private long firstCampaignAtMs = Long.MAX_VALUE;
    /**
     * When this restarted follower asks its voters for a pre-vote to find its leader, unless a
     * leader speaks first; MAX_VALUE: not planned (see {@link #enableRestartProbe}).
     */
    private long probeAtMs = Long.MAX_VALUE;
    /**
     * Rounds lost or timed out in a row since a leader was last heard or this node led (see
     * {@link #backoffFactor}). Written on the Raft lane only; volatile because the election timer
     * reads the factor on the timer thread when it draws its next timeout.
     */
    private volatile int failedRounds;
    /** Requests of the running round to ask again of voters that did not host the group yet. */
    private final VoteResends resends = new VoteResends();
    /** When the running pre-vote round started ({@link #endUndecidedPreVote}). */
    private long preVoteStartedMs;
    /** The process's bound on groups campaigning at once, shared by all its groups (see {@link CampaignSlots}). */
    private CampaignSlots slots = CampaignSlots.unlimited();
    /** This node holds one of {@link #slots}: from its round's start until its campaign is over ({@link #settleSlot}). */
    private boolean holdsSlot;
    /**
     * The silent-leader turn ({@link LeaderLiveness#silentTurnAtMs}) a wake-up already acted on. The turn is a
     * moment, not a state: once it passed and this follower started its pre-vote, got in line for
     * a campaign slot, deferred to another candidate (whose retry timer looks again) or found a
     * round of its own running, the round's own timers carry on. Asking to be woken for a turn
     * already past would come back at once, at every tick, for as long as the group waits:
     * thousands of groups waiting for slots after a process died spun the timer and their lanes
     * so (330 wake-ups per failed-over group in a simulation with 50 ms messages).
     */
    private long silentTurnActedOnMs = Long.MIN_VALUE;

    Election(RaftCore core, RaftConfig config) {
        this.core = core;
        this.config = config;
        this.self = config.self();
        this.removed = new RemovedMember(self);
        this.liveness = new LeaderLiveness(core, config);
        this.answers = new VoteAnswers(core, config, this, liveness);
    }

    /** What this node knows of its leader's liveness. */
    LeaderLiveness liveness() {
        return liveness;
    }

    void shareCampaignSlots(CampaignSlots shared) {
        this.slots = java.util.Objects.requireNonNull(shared, "shared");
    }

    /**
     * A slot came free for this node after it waited in line: it holds it now, and starts the
     * round it waited for if the leader is still lost (otherwise {@link #settleSlot} gives the
     * slot on at the end of this step).
     */
    void onCampaignSlotGranted(long nowMs) {
        holdsSlot = true;
        onElectionRetry(nowMs);
    }

    /**
     * End of every step of the core: a node that holds a campaign slot and no longer campaigns
     * (it leads, follows a leader, or its round ended) gives it to the next group in line.
     */
    void settleSlot() {
        if (holdsSlot && !campaigning()) {
            holdsSlot = false;
            slots.release(core);
        }
    }

    /** The node stopped: it gives back its slot and leaves the line. */
    void leaveSlots() {
        holdsSlot = false;
        slots.forget(core);
    }

    /** A round of ours is running: a pre-vote (also one won and waiting for our own hold), or our candidacy's vote. */
    private boolean campaigning() {
        VoteTally t = tally;
        return t != null && (preVoting() || (!t.preVote && core.role() == Role.CANDIDATE && t.term == core.term()));
    }

    /** The round in progress (if any) is over: the node became a follower of some term, or leader. */
    void endRound() {
        tally = null;
        candidacyAtMs = Long.MAX_VALUE;
        resends.clear();
    }

    /**
     * A leader of our term spoke: a reported break of its connection is old news, held pre-votes
     * are refused, and a pre-vote round of ours still waiting for answers is moot (the leader is
     * not lost). Without dropping it, a round whose answers never came (voters busy or down at the
     * time) stayed open while the leader's heartbeats kept the election timer from replacing it,
     * and the follower, with that election business, never went quiet, nor did its group.
     */
    void leaderHeard() {
        if (tally != null && tally.preVote && core.role() != Role.CANDIDATE) {
            tally = null;
        }
        liveness.leaderHeard();
        if (failedRounds != 0) {
            failedRounds = 0; // checked first: this runs on every heartbeat, and the field is volatile
        }
        firstCampaignAtMs = Long.MAX_VALUE;
        probeAtMs = Long.MAX_VALUE;
        campaignAtMs = Long.MAX_VALUE;
        candidacyAtMs = Long.MAX_VALUE;
        answers.decideHeld(core.lastLeaderContactMs(), true);
    }

    /** A leader's message was accepted: also lifts the removed-member hold. */
    void leaderContact() {
        leaderHeard();
        removed.leaderContact();
    }

    /**
     * A restarted node (term above 0) of a group that may go quiet: if no leader has spoken to it
     * {@code delayMs} after its start, it runs a pre-vote then instead of waiting out its election
     * timeout. Why: a quiet leader sends nothing, so a member that restarts while its group is quiet
     * hears no heartbeat; it used to learn its leader only at its election timeout, when its
     * pre-vote woke the group. Until then it stays awake with its timers, and a process restarting
     * thousands of groups paces their start on how many are awake (a 10,000-group restart took
     * about a minute, most of it waiting). Asking early costs the same round sooner: the voters
     * that know a live leader refuse, the request wakes that leader (a pre-vote for a term above
     * its own), its heartbeat tells this node who leads, and the group goes quiet again. If no
     * leader exists the round is an election's first step as usual: its candidacy still waits for
     * this node's own hold after its start (a start counts as a heartbeat, for any lease that may
     * rest on this node's earlier acknowledgements). A fresh node (term 0) has the fast first
     * election instead. Call once, right after construction.
     */
    void enableRestartProbe(long delayMs, long nowMs) {
        if (core.term() == 0 || core.leader() != null) {
            return;
        }
        probeAtMs = nowMs + delayMs;
    }

    /**
     * Fast first election (thesis §3.4 leaves the first election to the randomised timeouts):
     * in a group that has never had a leader, the voters would all wait out their election
     * timeout from their start, and a process that starts thousands of groups at once starts
     * thousands of rounds at the same moment, which split their votes and run again. Instead one
     * voter, chosen from the group id so that the groups' leaders spread over the members
     * ({@link #designatedFirst}), campaigns {@code delayMs} after its start, skipping pre-vote
     * ({@link #onWake}); voters that have followed no leader back it at once; the others keep their normal timeout, so the group is still led if
     * that voter is down. Only the timing changes: who may win, and how votes are counted, do not.
     * Does nothing unless this node starts at term 0 with an empty log.
     */
    void enableFastFirstElection(long delayMs, long nowMs) {
        if (core.term() != 0 || core.log().lastIndex() != 0 || core.leader() != null) {
            return;
        }
        liveness.startedFresh();
        if (designatedFirst()) {
            firstCampaignAtMs = nowMs + delayMs;
        } else {
            freshGraceUntilMs = nowMs + config.freshFirstCampaignGraceMs();
        }
    }

    /**
     * The election timer fired in a fresh group on a voter that is not the one chosen to campaign
     * first: within {@link RaftConfig#freshFirstCampaignGraceMs} of its start, and while the
     * chosen voter's process is not reported lost, it leaves the first campaign to that voter
     * (the timer fires again and asks again). Only when this node campaigns changes: once the
     * grace is over, or with the chosen voter's process gone, it campaigns as any voter does,
     * and it grants votes throughout.
     *
     * @return true if it waits (the caller starts no pre-vote now)
     */
    boolean waitsForFreshDesignated(long nowMs) {
        if (!liveness.followedNoLeader() || nowMs >= freshGraceUntilMs) {
            return false;
        }
        PeerId chosen = designated();
        return chosen != null && !chosen.equals(self) && core.quiescence().reachable(chosen);
    }

    /**
     * Is this node the voter of its fresh group that campaigns first: among the voters the
     * configuration allows to lead with the highest priority it names (the default where it
     * names none), sorted by id, the one a hash of the group id picks. Every member computes the
     * same from the same initial configuration; one whose own options say priority 0 never
     * campaigns (the others then elect at their timeout, after {@link #waitsForFreshDesignated}'s grace).
     */
    boolean designatedFirst() {
        return ownPriority() != 0 && !WitnessRules.neverLeads(config, core.membership()) && self.equals(designated());
    }

    /** The voter of a fresh group that campaigns first (see {@link #designatedFirst}); null if none may lead. */
    private PeerId designated() {
        Membership m = core.membership();
        java.util.List<PeerId> best = new java.util.ArrayList<>();
        int top = 1;
        for (PeerId p : m.voters()) { // sorted
            int priority = ElectionPriority.effective(m, p, ElectionPriority.UNKNOWN);
            if (priority > top) {
                top = priority;
                best.clear();
            }
            if (priority == top) {
                best.add(p);
            }
        }
        return best.isEmpty() ? null : PreferredLeader.of(config.groupId(), best);
    }

    /**
     * After the leader's connection broke, how long this follower waits before its pre-vote:
     * (turn - 1) failover slots, the turn as the leader last told it; without one (no heartbeat
     * since a restart or a leader change), the place among the surviving voters by known election priority, then id. The first
     * goes at once; each next one only if no one before it is campaigning ({@link #deferring}).
     * The voters hold their answer until they see the break too, so the first candidate need not
     * wait for them. The shell adds a few ms of jitter ({@link #campaignJitterBoundMs}).
     */
    long campaignDelayAfterBreakMs() {
        return (turnOrPlace() - 1L) * config.failoverSlotMs();
    }

    /** The bound of the random jitter the shell adds to the wait after a break: 1% of T (at least 1 ms). */
    long campaignJitterBoundMs() {
        return Math.max(1, config.electionTimeoutMs() / 100);
    }

    private int turnOrPlace() {
        int known = liveness.knownTurn();
        return known > 0 ? known : ElectionPriority.place(core.membership(), self, core.leader(), ownPriority());
    }

    /** This node's effective election priority under its latest configuration (0: never campaigns). */
    private int ownPriority() {
        return ElectionPriority.own(core.membership(), config);
    }

    /**
     * The randomised election timer fired with the leader silent, and this follower has no turn
     * from it: if it knows voters preferred to it ({@link ElectionPriority#knownPreferred}), it
     * waits one failover slot per such voter (a wake-up then starts its pre-vote), so that a
     * preferred survivor campaigns first and it still campaigns if they are gone.
     *
     * @return true if it waits (the caller starts no pre-vote now)
     */
    boolean waitsForPreferred(long nowMs) {
        if (liveness.knownTurn() > 0 || campaignAtMs != Long.MAX_VALUE) {
            return false; // a turn already orders us, or the wait (or an earlier start) is planned
        }
        int ahead = ElectionPriority.knownPreferred(core.membership(), self, core.leader(), ownPriority());
        if (ahead == 0) {
            return false;
        }
        campaignAtMs = nowMs + ahead * config.failoverSlotMs();
        return true;
    }

    /** Another node is campaigning, so our own turn waits (see {@link VoteAnswers#backsAnotherCandidate}). */
    boolean deferring(long nowMs) {
        return answers.backsAnotherCandidate(nowMs);
    }

    /**
     * How much longer than usual the next attempt waits (the retry pause after a lost round, and
     * the election timeout drawn once the leader is already lost): 1 after up to one failed round,
     * then doubling per round that failed in a row, at most 8. A failover, even one with a split
     * vote, takes at most one failed round and waits as usual. Rounds that keep failing mean the
     * voters cannot answer in time (a process starting thousands of groups on a busy machine, a
     * partition): asking again at the usual pace only adds requests in front of the answers, which
     * across thousands of groups keeps every process too busy to answer any of them.
     */
    int backoffFactor() {
        return 1 << Math.min(3, Math.max(0, failedRounds - 1));
    }

    /**
     * The election timer fired during our pre-vote: a round still undecided an election timeout
     * after it started ends as lost, so the timer can start the next. A candidate's round has its
     * vote timer for this; a pre-vote round had nothing, and a voter that answers "not hosted"
     * (asked again until it hosts the group, see {@link #handleRequestVoteNotHosted}), which is
     * also what a node stopped after a storage failure answers, kept it pending for good: with
     * the third node stopped so, two nodes that refused each other's concurrent pre-votes never
     * elected again.
     */
    void endUndecidedPreVote(long nowMs) {
        // preVoting() with no candidacy planned means the round is still undecided (see preVoting).
        if (preVoting() && candidacyAtMs == Long.MAX_VALUE && nowMs - preVoteStartedMs >= config.electionTimeoutMs()) {
            LOST_ROUND_LOG.info(nowMs, "{} lost pre-vote for term {} (undecided after {} ms)", core.label(), tally.term, nowMs - preVoteStartedMs);
            failedRounds++;
            tally = null;
        }
    }

    /** voteTimer fired: the vote round did not finish; step back and try again from pre-vote. */
    void onVoteTimeout(long nowMs) {
        if (core.role() == Role.CANDIDATE) {
            VOTE_TIMEOUT_LOG.info(nowMs, "{} vote round of term {} timed out; retrying from pre-vote", core.label(), core.term());
            failedRounds++;
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
        if (!liveness.connectionBroke(nowMs)) {
            return false; // the same break reported again (e.g. by both directions): keep the first
        }
        if (answers.behindAskedJustBefore(nowMs)) {
            campaignAtMs = liveness.lostForVotingAtMs(); // onWake starts our pre-vote then, unless we back another's
        }
        LOG.debug("{} saw leader {}'s connection break {} ms after its last heartbeat; backs a candidate in {} ms", core.label(), core.leader(),
                liveness.sinceLastHeartbeatMs(nowMs), Math.max(0, liveness.lostForVotingAtMs() - nowMs));
        answers.decideHeld(nowMs, false); // held pre-votes waited for this
        // A witness backs a candidate sooner, like any voter that saw the break, but never campaigns itself.
        return !WitnessRules.neverLeads(config, core.membership());
    }

    /**
     * The transport found the process at {@code endpoint} gone: after its connection broke, a new
     * connection to it was refused (nothing listens there). If it was our leader's and we saw the
     * break, the hold shrinks to what a lease needs ({@link LeaderLiveness#lostForVotingAtMs}); held answers
     * and a candidacy waiting on our own hold are decided again now.
     */
    void onLeaderProcessGone(String endpoint, long nowMs) {
        if (core.leader() == null || !core.leader().endpoint().equals(endpoint) || !liveness.processFoundGone()) {
            return;
        }
        LOG.debug("{} learned leader {}'s process is gone (a new connection was refused); backs a candidate in {} ms", core.label(),
                core.leader(), Math.max(0, liveness.lostForVotingAtMs() - nowMs));
        // What waited for the end of our hold waits for its new, earlier end; onWake does what is due.
        if (campaignAtMs != Long.MAX_VALUE) {
            campaignAtMs = Math.min(campaignAtMs, liveness.lostForVotingAtMs());
        }
        if (candidacyAtMs != Long.MAX_VALUE) {
            candidacyAtMs = Math.min(candidacyAtMs, liveness.lostForVotingAtMs());
        }
        VoteTally t = tally;
        if (t != null && t.preVote && t.term == core.term() + 1 && t.outcome(core.membership()) == VoteTally.Outcome.PENDING) {
            // Our pre-vote left before the probe answered: ask again with the finding, so voters
            // holding their answer for a heartbeat that cannot come decide now (our tally counts
            // each voter once, whichever of the two requests it answers).
            broadcastVote(true, t.term, false, true);
        }
        onWake(nowMs);
    }

    /**
     * This follower's wait after a broken leader connection ({@link #campaignDelayAfterBreakMs})
     * passed. A pre-vote already under way (started early because a peer behind us asked for
     * our vote) is left to finish. If another survivor is campaigning (we backed its pre-vote)
     * we let it: the short election retry checks again later, in case it fails.
     */
    void onConnectionLostGraceElapsed(long nowMs) {
        if (core.role() != Role.LEADER && core.role() != Role.CANDIDATE && liveness.leaderLost(nowMs) && !preVoting()) {
            if (deferring(nowMs)) {
                core.out().retryElection();
            } else {
                startPreVote(nowMs);
            }
        }
    }

    /**
     * The wake-up the core asked for ({@link Ready#wakeAtMs}) came: decide held pre-votes that are
     * due, and start our ranked pre-vote if a silent leader's timeout and our turn passed.
     */
    void onWake(long nowMs) {
        answers.decideHeld(nowMs, false);
        for (VoteResends.Resend r : resends.takeDue(nowMs)) {
            if (roundRunning(r.request())) {
                core.out().send(new Ready.VoteRequest(r.to(), r.request()));
            }
        }
        if (nowMs >= firstCampaignAtMs) {
            firstCampaignAtMs = Long.MAX_VALUE;
            if (core.role() == Role.FOLLOWER && liveness.followedNoLeader() && core.term() == 0 && !preVoting() && !deferring(nowMs)
                    && removed.mayCampaign(core.membership())) {
                // Pre-vote (thesis §9.6) keeps a node that cannot win from raising the group's
                // term and deposing a live leader; it never decides who may win (election safety
                // rests on the vote alone). A candidacy for term 1 deposes no one: a leader is of
                // term 1 or more, and a request for a term not above a node's own changes neither
                // its term nor its leader. So this first round skips it. Only the designated
                // voter does: the others, whose timers may fire before their peers host the group
                // at all, pre-vote as usual rather than spend a synced term write on a lost round.
                LOG.debug("{} campaigns first in its fresh group", core.label());
                becomeCandidate(nowMs, false);
                return;
            }
        }
        if (nowMs >= probeAtMs) {
            probeAtMs = Long.MAX_VALUE;
            if (core.role() == Role.FOLLOWER && core.leader() == null && !preVoting() && !deferring(nowMs)) {
                LOG.debug("{} heard no leader since its restart; asks its voters for a pre-vote", core.label());
                startPreVote(nowMs);
                return;
            }
        }
        if (nowMs >= candidacyAtMs) {
            candidacyAtMs = Long.MAX_VALUE;
            VoteTally t = tally;
            if (core.role() == Role.FOLLOWER && t != null && t.preVote && t.term == core.term() + 1
                    && t.outcome(core.membership()) == VoteTally.Outcome.WON) {
                becomeCandidateOnceOwnHoldPassed(nowMs);
                return;
            }
        }
        if (nowMs >= campaignAtMs) {
            campaignAtMs = Long.MAX_VALUE;
            if (core.role() == Role.FOLLOWER && liveness.leaderLost(nowMs) && !preVoting() && !deferring(nowMs)) {
                startPreVote(nowMs);
                return;
            }
        }
        if (core.role() == Role.FOLLOWER && liveness.knownTurn() > 0 && silentTurnDue(nowMs)) {
            silentTurnActedOnMs = liveness.silentTurnAtMs();
            if (preVoting()) {
                return; // our round is under way: its answers or its lost-round retry decide what follows
            }
            if (deferring(nowMs)) {
                core.out().retryElection();
            } else {
                startPreVote(nowMs);
            }
        }
    }

    /** Our silent-leader turn has come and no wake-up has acted on it yet. */
    private boolean silentTurnDue(long nowMs) {
        long at = liveness.silentTurnAtMs();
        return nowMs >= at && at != silentTurnActedOnMs;
    }

    /** When the core next needs {@link #onWake}: a held answer's deadline, or our silent-leader turn; MAX_VALUE if never. */
    long nextWakeMs() {
        if (core.quiet()) {
            return Long.MAX_VALUE; // nothing of an election is running, and a quiet follower's leader is vouched for by its transport
        }
        long at = Math.min(Math.min(Math.min(Math.min(answers.earliestHeldDeadlineMs(), campaignAtMs), candidacyAtMs), firstCampaignAtMs),
                probeAtMs);
        if (tally != null) {
            at = Math.min(at, resends.earliestMs());
        }
        if (core.role() == Role.FOLLOWER && liveness.knownTurn() > 0 && liveness.silentTurnAtMs() != silentTurnActedOnMs) {
            at = Math.min(at, liveness.silentTurnAtMs());
        }
        return at;
    }

    /** No election business: no round, no held answer, no break seen, no campaign planned (a follower may go quiet). */
    boolean idle() {
        return tally == null && answers.holdsNone() && !liveness.sawConnectionBreak() && campaignAtMs == Long.MAX_VALUE
                && candidacyAtMs == Long.MAX_VALUE && firstCampaignAtMs == Long.MAX_VALUE && probeAtMs == Long.MAX_VALUE;
    }

    /** How many pre-vote answers are held (for tests). */
    int heldVotes() {
        return answers.heldCount();
    }

    /** Is a pre-vote round of ours still waiting for answers? */
    boolean preVoting() {
        VoteTally t = tally;
        return t != null && t.preVote && t.term == core.term() + 1
                && (t.outcome(core.membership()) == VoteTally.Outcome.PENDING || candidacyAtMs != Long.MAX_VALUE);
    }

    /**
     * Our pre-vote won: become candidate, but only once we, too, would back a candidate against
     * the old leader ({@link LeaderLiveness#lostForVoting}): our own vote is one of the election quorum,
     * and the old leader's lease may rest on our acknowledgement of its last heartbeat (a quorum
     * of the leader and us, while the other voters missed that heartbeat), so our own hold must
     * pass like theirs. Until then we wait for a wake-up; the leader speaking cancels it.
     */
    private void becomeCandidateOnceOwnHoldPassed(long nowMs) {
        if (liveness.lostForVoting(nowMs)) {
            candidacyAtMs = Long.MAX_VALUE;
            becomeCandidate(nowMs, false);
        } else {
            candidacyAtMs = liveness.lostForVotingAtMs();
            LOG.debug("{} won its pre-vote for term {}; campaigns when its own hold ends at {}", core.label(), core.term() + 1, candidacyAtMs);
        }
    }

    void startPreVote(long nowMs) {
        Membership m = core.membership();
        if (core.repairing() || !removed.mayCampaign(m) || WitnessRules.neverLeads(config, m)) {
            return; // a fenced node may lack committed entries: it must not lead; a removed one is not a member; a witness holds no data
        }
        if (ownPriority() == 0) {
            PRE_VOTE_LOG.info(nowMs, "{} does not campaign: its election priority is 0 (it never leads)", core.label());
            return;
        }
        if (!holdsSlot) {
            if (!slots.tryTake(core, nowMs)) {
                // Too many groups of this process campaign already: wait in line, start when granted.
                core.out().waitForCampaignSlot();
                return;
            }
            holdsSlot = true;
        }
        tally = new VoteTally(true, core.term() + 1, self);
        preVoteStartedMs = nowMs;
        candidacyAtMs = Long.MAX_VALUE;
        PRE_VOTE_LOG.info(nowMs, "{} starts pre-vote for term {} (last log {}/{})", core.label(), core.term() + 1, core.log().lastIndex(), core.log().lastTerm());
        if (tally.outcome(m) == VoteTally.Outcome.WON) {
            becomeCandidate(nowMs, false);
            return;
        }
        PeerId asker = answers.takeImpliedPreVote(core.term() + 1, core.lastLeaderContactMs(), nowMs, config.electionTimeoutMs() / 2);
        if (asker != null && m.isVoter(asker)) {
            tally.record(asker, true, true);
            if (tally.outcome(m) == VoteTally.Outcome.WON) {
                IMPLIED_PRE_VOTE_LOG.info(nowMs, "{} counts the pre-vote request of {} (log behind ours) as its pre-vote: a quorum already", core.label(), asker);
                becomeCandidateOnceOwnHoldPassed(nowMs);
                return;
            }
        }
        broadcastVote(true, core.term() + 1, false, liveness.sawConnectionBreak());
    }

    private void becomeCandidate(long nowMs, boolean leadershipTransfer) {
        // The broken-connection flag stays: if this round fails (or we yield a split vote) the old
        // leader is still gone, and we must back the next candidate without waiting out T.
        if (core.repairing() || WitnessRules.neverLeads(config, core.membership())) {
            return;
        }
        if (ownPriority() == 0) {
            return; // never leads (see ElectionPriority)
        }
        // Durable first: if the write fails nothing of the new term exists, here or on the wire.
        core.enterNextTerm();
        tally = new VoteTally(false, core.term(), self);
        CAMPAIGN_LOG.info(nowMs, "{} campaigns in term {}", core.label(), core.term());
        if (tally.outcome(core.membership()) == VoteTally.Outcome.WON) {
            core.becomeLeader(nowMs);
            return;
        }
        broadcastVote(false, core.term(), leadershipTransfer, false);
    }

    private void broadcastVote(boolean preVote, long voteTerm, boolean transfer, boolean leaderConnectionBroke) {
        String rivalThatYielded = yieldedBy != null && voteTerm == yieldedTerm + 1 ? yieldedBy.toString() : "";
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
                    .setLeaderConnectionBroke(leaderConnectionBroke)
                    .setYieldedBy(rivalThatYielded)
                    .setLeaderProcessGone(preVote && leaderConnectionBroke && liveness.processGone())
                    .build()));
        }
    }

    /** Answers a RequestVote or pre-vote; null if a pre-vote answer is held (see {@link VoteAnswers#answer}). */
    RequestVoteResponse handleRequestVote(RequestVoteRequest req, long nowMs, VoteReply replyTo) {
        return answers.answer(req, nowMs, replyTo);
    }

    /** A candidate behind us needs us: start our pre-vote when our own hold after the break ends. */
    void campaignWhenOwnHoldEnds() {
        campaignAtMs = liveness.lostForVotingAtMs();
    }

    /** The term of the round in progress (only while {@link #preVoting}). */
    long roundTerm() {
        return tally.term;
    }

    /** A stronger candidate competes with our pre-vote: drop our round and back it. */
    void standAside() {
        tally = null;
        candidacyAtMs = Long.MAX_VALUE;
    }

    /**
     * A (pre-)vote request got no answer (peer unreachable or timed out). For deciding when a round
     * is lost it counts as a refusal; it never counts towards winning.
     */
    void handleRequestVoteFailure(PeerId to, RequestVoteRequest req, long nowMs) {
        handleRequestVoteResponse(to, req, answers.voteResponse(req.getPreVote(), false, "no answer"), false, nowMs);
    }

    /**
     * {@code to} answered that it does not host the group: its process is up but has not started
     * (or has stopped) its member. Not a refusal while the round runs: the request goes to it again
     * after a tenth of the election timeout, as long as the same round is still running then.
     */
    void handleRequestVoteNotHosted(PeerId to, RequestVoteRequest req, long nowMs) {
        if (!roundRunning(req)) {
            return;
        }
        resends.schedule(to, req, nowMs + Math.max(10, config.electionTimeoutMs() / 10)); // the wake-up follows from nextWakeMs
    }

    /** Is {@code req} a request of the round this node is running now (answers to it still count)? */
    private boolean roundRunning(RequestVoteRequest req) {
        VoteTally t = tally;
        if (t == null || t.preVote != req.getPreVote() || t.term != req.getTerm()) {
            return false;
        }
        return t.preVote ? core.role() != Role.CANDIDATE && core.role() != Role.LEADER
                : core.role() == Role.CANDIDATE && core.term() == req.getTerm();
    }

    /** The short retry pause after a lost round ended: try again if the leader is still lost. */
    void onElectionRetry(long nowMs) {
        if (core.role() == Role.FOLLOWER && tally == null && liveness.leaderLost(nowMs)) {
            if (deferring(nowMs)) {
                core.out().retryElection(); // another survivor is campaigning: look again after its round
            } else {
                startPreVote(nowMs);
            }
        }
    }

    /** Handles an answer to our RequestVote or pre-vote. */
    void handleRequestVoteResponse(PeerId from, RequestVoteRequest req, RequestVoteResponse resp, long nowMs) {
        handleRequestVoteResponse(from, req, resp, true, nowMs);
    }

    /** @param answered false: no answer came (a failure or timeout stands in as a refusal) */
    private void handleRequestVoteResponse(PeerId from, RequestVoteRequest req, RequestVoteResponse resp, boolean answered, long nowMs) {
        if (resp.getTerm() > core.term() && !resp.getGranted()) {
            boolean ours = roundRunning(req);
            core.becomeFollower(resp.getTerm(), null, nowMs);
            if (ours && answered) {
                // A voter already in a later term refused our round for its term alone: it is
                // reachable and said nothing against our log. Try again from the new term after
                // the short retry pause (onElectionRetry checks the leader is still lost), not
                // after an election timeout that failed rounds may have stretched eightfold: that
                // left the only node holding the last committed entry idle for seconds after a
                // partition healed, while the others could not win without it.
                core.out().retryElection();
            }
            return;
        }
        if (resp.getVoterYields() && !req.getPreVote() && core.role() == Role.CANDIDATE && req.getTerm() == core.term()) {
            YIELDED_LOG.info(nowMs, "{}: {} yielded the split vote of term {}; campaigning again", core.label(), from, core.term());
            yieldedBy = from;
            yieldedTerm = core.term();
            core.becomeFollower(core.term(), null, nowMs);
            startPreVote(nowMs);
            return;
        }
        if (!roundRunning(req)) {
            return; // an answer to an older round, or to one this node has left
        }
        VoteTally t = tally;
        if (t.preVote && core.role() == Role.FOLLOWER && removed.toldRemoved(from, resp.getCandidateRemovedAtIndex(), core.membership())) {
            tally = null; // no retry: RemovedMember keeps us from campaigning until a leader calls
            return;
        }
        t.record(from, resp.getGranted(), answered);
        LOG.debug("{} got {} {} from {} for term {} ({})", core.label(), t.preVote ? "pre-vote" : "vote", resp.getGranted() ? "granted" : "refused", from, t.term, resp.getReason());
        switch (t.outcome(core.membership())) {
            case WON -> {
                if (t.preVote) {
                    if (candidacyAtMs == Long.MAX_VALUE) {
                        becomeCandidateOnceOwnHoldPassed(nowMs);
                    }
                } else {
                    failedRounds = 0;
                    core.becomeLeader(nowMs);
                }
            }
            case LOST -> {
                // The answer that decided the loss says why (the refusal's reason, or that none came in time).
                LOST_ROUND_LOG.info(nowMs, "{} lost {} for term {} ({}: {})", core.label(), t.preVote ? "pre-vote" : "vote", t.term, from,
                        !answered ? "no answer in time" : resp.getReason().isEmpty() ? "refused" : resp.getReason());
                failedRounds++;
                tally = null;
                if (!t.preVote) {
                    core.becomeFollower(core.term(), null, nowMs);
                }
                if (t.noneAnswered()) {
                    // No voter answered at all (down, not hosting the group yet, or too busy to
                    // answer within the vote timeout): asking again in a moment would not help
                    // and, across thousands of groups on a busy process, adds load that keeps
                    // the answers away. The election timer (randomised, while the leader stays
                    // lost) asks again instead.
                    return;
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
        if (req.getTerm() != core.term() || core.role() != Role.FOLLOWER || !core.membership().isVoter(self)
                || WitnessRules.neverLeads(config, core.membership())) {
            return TimeoutNowResponse.newBuilder().setTerm(core.term()).setSuccess(false).build();
        }
        if (ownPriority() == 0) {
            return TimeoutNowResponse.newBuilder().setTerm(core.term()).setSuccess(false).build(); // never leads
        }
        becomeCandidate(nowMs, true);
        return TimeoutNowResponse.newBuilder().setTerm(core.term()).setSuccess(true).build();
    }

}
