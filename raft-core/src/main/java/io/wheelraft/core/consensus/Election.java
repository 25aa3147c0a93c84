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
    /** Our failover turn as the leader last told it (0: none), and which leader and term told it. */
    private int turn;
    private PeerId turnLeader;
    private long turnTerm;
    /** Pre-vote answers held while we confirm the leader is lost. */
    private final HeldVotes held = new HeldVotes();
    /** When to start our own pre-vote early (a candidate behind us asked during our hold); MAX_VALUE: not planned. */
    private long campaignAtMs = Long.MAX_VALUE;
    /**
     * Our pre-vote won, but our own hold after the leader's last heartbeat has not passed yet:
     * when it does, we become candidate (our own vote counts like any voter's); MAX_VALUE: none.
     */
    private long candidacyAtMs = Long.MAX_VALUE;
    /**
     * When a candidate whose log is behind ours asked for our pre-vote because the leader's
     * connection broke, before we saw the break ourselves: seeing it soon after, we campaign at
     * the end of our hold rather than at our later turn (the candidate cannot win).
     */
    private long behindAskedBeforeBreakMs = Long.MIN_VALUE / 2;
    /**
     * The rival candidate that yielded a split term to us ({@code voter_yields}), and that term:
     * our rounds for the next term name it, so voters that voted for it back us at once.
     */
    private PeerId yieldedBy;
    private long yieldedTerm = -1;
    /** When we last granted or held another node's pre-vote: it is campaigning, so our own turn waits. */
    private long lastPreVoteBackedMs = Long.MIN_VALUE / 2;
    /**
     * When we last received a heartbeat (or started): the leader's lease counts from heartbeats
     * it sent, so a voter that saw the break waits {@link RaftConfig#brokenLeaderHoldMs} from here.
     */
    private long lastHeartbeatMs;
    /**
     * When we last received a heartbeat the leader may count toward a read lease (one not marked
     * {@code no_lease}), or started: the part of the hold that protects the lease counts from here.
     */
    private long lastLeaseHeartbeatMs;
    /**
     * After the leader's connection broke, the transport found its process gone (a new connection
     * was refused): no heartbeat of that leader can still be on its way, so the rest of the hold
     * protects only a lease ({@link #lastLeaseHeartbeatMs}); reset with the break.
     */
    private boolean leaderProcessGone;
    /**
     * Fast first election is on and this node has followed no leader: it started at term 0 (so it
     * never voted nor acknowledged anything, durably or not: a term above 0 is durable before
     * anything of it is answered) and no leader has spoken to it since. No leader's lease rests on
     * it and it has no leader to be disrupted, so it need not wait out its election timeout before
     * backing a candidate (see {@link #leaderLostForVoting}).
     */
    private boolean followedNoLeader;
    /** When this node, the designated first candidate of a fresh group, campaigns; MAX_VALUE: not planned. */
    private long firstCampaignAtMs = Long.MAX_VALUE;
    /**
     * Rounds lost or timed out in a row since a leader was last heard or this node led (see
     * {@link #backoffFactor}). Written on the Raft lane only; volatile because the election timer
     * reads the factor on the timer thread when it draws its next timeout.
     */
    private volatile int failedRounds;
    /** Requests of the running round to ask again of voters that did not host the group yet. */
    private final VoteResends resends = new VoteResends();
    /** A pre-vote request refused for its shorter log, counted as the asker's pre-vote in our next round. */
    private final ImpliedPreVote implied = new ImpliedPreVote();

    Election(RaftCore core, RaftConfig config) {
        this.core = core;
        this.config = config;
        this.self = config.self();
        this.removed = new RemovedMember(self);
        this.lastHeartbeatMs = core.lastLeaderContactMs(); // our start counts as one (we may have acknowledged one just before)
        this.lastLeaseHeartbeatMs = lastHeartbeatMs;
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
        followedNoLeader = false;
        if (failedRounds != 0) {
            failedRounds = 0; // checked first: this runs on every heartbeat, and the field is volatile
        }
        firstCampaignAtMs = Long.MAX_VALUE;
        leaderConnectionLostMs = -1;
        leaderProcessGone = false;
        campaignAtMs = Long.MAX_VALUE;
        candidacyAtMs = Long.MAX_VALUE;
        decideHeld(core.lastLeaderContactMs(), true);
    }

    /** A leader's message was accepted: also lifts the removed-member hold. */
    void leaderContact() {
        leaderHeard();
        removed.leaderContact();
    }

    /**
     * The current leader's AppendEntries (a heartbeat or not) carried our failover turn (0: none).
     *
     * @param heartbeat a heartbeat-timer heartbeat (not a read round)
     * @param lease     and the leader may count our answer toward a read lease (not {@code no_lease})
     */
    void turnFromLeader(int failoverTurn, boolean heartbeat, boolean lease, long nowMs) {
        boolean newLeader = turnTerm != core.term() || !core.leader().equals(turnLeader);
        if (heartbeat || newLeader) {
            // A new leader's first message counts too: its heartbeats start a moment later, and a
            // connection that flaps in between must not make us back a candidate against it.
            lastHeartbeatMs = Math.max(lastHeartbeatMs, nowMs);
        }
        if (heartbeat && lease) {
            lastLeaseHeartbeatMs = Math.max(lastLeaseHeartbeatMs, nowMs);
        }
        turn = failoverTurn;
        turnLeader = core.leader();
        turnTerm = core.term();
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
        followedNoLeader = true;
        if (designatedFirst()) {
            firstCampaignAtMs = nowMs + delayMs;
        }
    }

    /**
     * Is this node the voter of its fresh group that campaigns first: among the voters the
     * configuration allows to lead with the highest priority it names (the default where it
     * names none), sorted by id, the one a hash of the group id picks. Every member computes the
     * same from the same initial configuration; one whose own options say priority 0 never
     * campaigns (the others then elect at their timeout).
     */
    boolean designatedFirst() {
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
        if (best.isEmpty() || ownPriority() == 0 || WitnessRules.neverLeads(config, m)) {
            return false;
        }
        int h = config.groupId().hashCode() * 0x9E3779B9; // spreads ids that differ only a little ("0", "1", ...)
        h ^= h >>> 16;
        return best.get(Math.floorMod(h, best.size())).equals(self);
    }

    /** Our failover turn if the current leader of the current term told us one, else 0. */
    int knownTurn() {
        return turn > 0 && turnTerm == core.term() && turnLeader != null && turnLeader.equals(core.leader()) ? turn : 0;
    }

    /**
     * Has this follower lost its leader, for starting a pre-vote: silent for an election timeout,
     * or its connection broke (the turn order is kept by when the shell calls
     * {@link #onConnectionLostGraceElapsed}, see {@link #campaignDelayAfterBreakMs}).
     */
    boolean leaderLost(long nowMs) {
        return nowMs - core.lastLeaderContactMs() >= config.electionTimeoutMs() || leaderConnectionLostMs >= 0;
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
        int known = knownTurn();
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
        if (knownTurn() > 0 || campaignAtMs != Long.MAX_VALUE) {
            return false; // a turn already orders us, or the wait (or an earlier start) is planned
        }
        int ahead = ElectionPriority.knownPreferred(core.membership(), self, core.leader(), ownPriority());
        if (ahead == 0) {
            return false;
        }
        campaignAtMs = nowMs + ahead * config.failoverSlotMs();
        return true;
    }

    /**
     * When a silent leader counts as lost for this follower's pre-vote: its election timeout after
     * the last contact, plus a margin and (turn - 1) slots when the leader told it a turn. Without
     * a turn only the timeout counts (the node's randomised election timer then spreads the
     * followers). The old leader's lease ends before the timeout, so campaigning at it is safe.
     */
    long silentTurnAtMs() {
        int known = knownTurn();
        long at = core.lastLeaderContactMs() + config.electionTimeoutMs();
        return known == 0 ? at : at + config.silentLeaderMarginMs() + (known - 1L) * config.failoverSlotMs();
    }

    /**
     * Another node is campaigning: we hold its pre-vote answer, or granted one lately (within two
     * slots). Our own turn then waits for its outcome (an election retry checks again later).
     */
    boolean deferring(long nowMs) {
        return !held.isEmpty() || nowMs - lastPreVoteBackedMs < 2 * config.failoverSlotMs();
    }

    /**
     * Whether, as a voter, we back a candidate against our leader: silent for an election timeout,
     * or we saw its connection break ourselves and {@link RaftConfig#brokenLeaderHoldMs} passed
     * since its last heartbeat reached us. The leader's lease relies on that hold (see
     * {@link RaftConfig#leaseMs}): it counts from the sending of heartbeats a quorum acknowledged,
     * and such a quorum shares a voter with any election quorum.
     */
    private boolean leaderLostForVoting(long nowMs) {
        return nowMs >= lostForVotingAtMs();
    }

    /**
     * When {@link #leaderLostForVoting} becomes true, if nothing is heard meanwhile. After a break
     * the hold has two jobs: it outlasts any lease the leader may rest on our answers, and it
     * lets a live leader's next heartbeat come first when the connection only flapped. Once the
     * leader's process is known gone, only the first is left, and only for heartbeats that could
     * carry a lease.
     */
    private long lostForVotingAtMs() {
        if (followedNoLeader) {
            return Long.MIN_VALUE / 2; // no lease rests on us, no leader of ours can be disrupted
        }
        long silent = core.lastLeaderContactMs() + config.electionTimeoutMs();
        if (leaderConnectionLostMs < 0) {
            return silent;
        }
        long since = leaderProcessGone ? lastLeaseHeartbeatMs : lastHeartbeatMs;
        return Math.min(silent, since + config.brokenLeaderHoldMs());
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
        if (leaderConnectionLostMs >= 0) {
            return false; // the same break reported again (e.g. by both directions): keep the first
        }
        leaderConnectionLostMs = nowMs;
        if (nowMs - behindAskedBeforeBreakMs <= config.voteConfirmWindowMs()) {
            campaignAtMs = lostForVotingAtMs(); // onWake starts our pre-vote then, unless we back another's
        }
        LOG.debug("{} saw leader {}'s connection break {} ms after its last heartbeat; backs a candidate in {} ms", core.label(), core.leader(),
                nowMs - lastHeartbeatMs, Math.max(0, lostForVotingAtMs() - nowMs));
        decideHeld(nowMs, false); // held pre-votes waited for this
        // A witness backs a candidate sooner, like any voter that saw the break, but never campaigns itself.
        return !WitnessRules.neverLeads(config, core.membership());
    }

    /**
     * The transport found the process at {@code endpoint} gone: after its connection broke, a new
     * connection to it was refused (nothing listens there). If it was our leader's and we saw the
     * break, the hold shrinks to what a lease needs ({@link #lostForVotingAtMs}); held answers
     * and a candidacy waiting on our own hold are decided again now.
     */
    void onLeaderProcessGone(String endpoint, long nowMs) {
        if (leaderConnectionLostMs < 0 || leaderProcessGone || core.leader() == null || !core.leader().endpoint().equals(endpoint)) {
            return;
        }
        leaderProcessGone = true;
        LOG.debug("{} learned leader {}'s process is gone (a new connection was refused); backs a candidate in {} ms", core.label(),
                core.leader(), Math.max(0, lostForVotingAtMs() - nowMs));
        // What waited for the end of our hold waits for its new, earlier end; onWake does what is due.
        if (campaignAtMs != Long.MAX_VALUE) {
            campaignAtMs = Math.min(campaignAtMs, lostForVotingAtMs());
        }
        if (candidacyAtMs != Long.MAX_VALUE) {
            candidacyAtMs = Math.min(candidacyAtMs, lostForVotingAtMs());
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
        if (core.role() != Role.LEADER && core.role() != Role.CANDIDATE && leaderLost(nowMs) && !preVoting()) {
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
        decideHeld(nowMs, false);
        for (VoteResends.Resend r : resends.takeDue(nowMs)) {
            if (roundRunning(r.request())) {
                core.out().send(new Ready.VoteRequest(r.to(), r.request()));
            }
        }
        if (nowMs >= firstCampaignAtMs) {
            firstCampaignAtMs = Long.MAX_VALUE;
            if (core.role() == Role.FOLLOWER && followedNoLeader && core.term() == 0 && !preVoting() && !deferring(nowMs)
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
            if (core.role() == Role.FOLLOWER && leaderLost(nowMs) && !preVoting() && !deferring(nowMs)) {
                startPreVote(nowMs);
                return;
            }
        }
        if (core.role() == Role.FOLLOWER && knownTurn() > 0 && nowMs >= silentTurnAtMs() && !preVoting()) {
            if (deferring(nowMs)) {
                core.out().retryElection();
            } else {
                startPreVote(nowMs);
            }
        }
    }

    /** When the core next needs {@link #onWake}: a held answer's deadline, or our silent-leader turn; MAX_VALUE if never. */
    long nextWakeMs() {
        if (core.quiet()) {
            return Long.MAX_VALUE; // nothing of an election is running, and a quiet follower's leader is vouched for by its transport
        }
        long at = Math.min(Math.min(Math.min(held.earliestDeadlineMs(), campaignAtMs), candidacyAtMs), firstCampaignAtMs);
        if (tally != null) {
            at = Math.min(at, resends.earliestMs());
        }
        if (core.role() == Role.FOLLOWER && knownTurn() > 0) {
            at = Math.min(at, silentTurnAtMs());
        }
        return at;
    }

    /** No election business: no round, no held answer, no break seen, no campaign planned (a follower may go quiet). */
    boolean idle() {
        return tally == null && held.isEmpty() && leaderConnectionLostMs < 0 && campaignAtMs == Long.MAX_VALUE
                && candidacyAtMs == Long.MAX_VALUE && firstCampaignAtMs == Long.MAX_VALUE;
    }

    /** How many pre-vote answers are held (for tests). */
    int heldVotes() {
        return held.size();
    }

    /**
     * Decides held pre-vote answers: granted (or refused for another reason) once the leader is
     * lost for voting; refused once their deadline passed, or at once if the leader spoke. A
     * voter that saw the break itself but whose hold after the last contact has not passed yet
     * keeps holding until then.
     */
    private void decideHeld(long nowMs, boolean leaderSpoke) {
        if (held.isEmpty()) {
            return;
        }
        for (HeldVotes.Held h : held.takeAll()) {
            if (!leaderSpoke && !leaderLostForVoting(nowMs)) {
                long lostAt = lostForVotingAtMs();
                if (leaderConnectionLostMs >= 0 && lostAt > h.deadlineMs) {
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

    /** Is a pre-vote round of ours still waiting for answers? */
    boolean preVoting() {
        VoteTally t = tally;
        return t != null && t.preVote && t.term == core.term() + 1
                && (t.outcome(core.membership()) == VoteTally.Outcome.PENDING || candidacyAtMs != Long.MAX_VALUE);
    }

    /**
     * Our pre-vote won: become candidate, but only once we, too, would back a candidate against
     * the old leader ({@link #leaderLostForVoting}): our own vote is one of the election quorum,
     * and the old leader's lease may rest on our acknowledgement of its last heartbeat (a quorum
     * of the leader and us, while the other voters missed that heartbeat), so our own hold must
     * pass like theirs. Until then we wait for a wake-up; the leader speaking cancels it.
     */
    private void becomeCandidateOnceOwnHoldPassed(long nowMs) {
        if (leaderLostForVoting(nowMs)) {
            candidacyAtMs = Long.MAX_VALUE;
            becomeCandidate(nowMs, false);
        } else {
            candidacyAtMs = lostForVotingAtMs();
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
        tally = new VoteTally(true, core.term() + 1, self);
        candidacyAtMs = Long.MAX_VALUE;
        PRE_VOTE_LOG.info(nowMs, "{} starts pre-vote for term {} (last log {}/{})", core.label(), core.term() + 1, core.log().lastIndex(), core.log().lastTerm());
        if (tally.outcome(m) == VoteTally.Outcome.WON) {
            becomeCandidate(nowMs, false);
            return;
        }
        PeerId asker = implied.take(core.term() + 1, core.lastLeaderContactMs(), nowMs, config.electionTimeoutMs() / 2);
        if (asker != null && m.isVoter(asker)) {
            tally.record(asker, true, true);
            if (tally.outcome(m) == VoteTally.Outcome.WON) {
                LOG.info("{} counts the pre-vote request of {} (log behind ours) as its pre-vote: a quorum already", core.label(), asker);
                becomeCandidateOnceOwnHoldPassed(nowMs);
                return;
            }
        }
        broadcastVote(true, core.term() + 1, false, leaderConnectionLostMs >= 0);
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
        LOG.info("{} campaigns in term {}", core.label(), core.term());
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
                    .setLeaderProcessGone(preVote && leaderConnectionBroke && leaderProcessGone)
                    .build()));
        }
    }

    /**
     * Answers a RequestVote or pre-vote (§5.2, §5.4.1, thesis §9.6 and §4.2.3).
     *
     * @param replyTo where a held pre-vote answer goes later, through {@link Ready.VoteAnswered};
     *                null: never hold, answer now
     * @return the answer, or null if the pre-vote answer is held
     */
    RequestVoteResponse handleRequestVote(RequestVoteRequest req, long nowMs, VoteReply replyTo) {
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
        if (!leaderProcessGone && core.leader() != null && core.role() == Role.FOLLOWER && claimsOurLeaderGone(req)) {
            // The candidate saw our leader's connection break and its address refuse a new one. Our
            // own report of the break may still be on its way (a busy or freshly started process
            // hears of it tens of ms later): take the candidate's word for both.
            if (leaderConnectionLostMs < 0) {
                leaderConnectionLostMs = nowMs;
            }
            leaderProcessGone = true;
            LOG.debug("{} takes {}'s word that leader {}'s process is gone", core.label(), candidate, core.leader());
        }
        if (preVoting() && req.getTerm() == tally.term) {
            // Two survivors pre-vote at once (their turns came from different heartbeat rounds, or
            // no turn was known). Both would pass and split the vote: the weaker stands aside and
            // backs the stronger (better log, then lower id), which refuses it in turn.
            if (!VoteTally.winsTie(req, candidate, core.log().lastTerm(), core.log().lastIndex(), self)) {
                return voteResponse(true, false, "competing pre-vote of term " + tally.term + " with a log at least as good");
            }
            LOG.info("{} stands aside from its pre-vote for term {}: {} competes with a stronger claim", core.label(), tally.term, candidate);
            tally = null;
            candidacyAtMs = Long.MAX_VALUE;
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
        boolean lost = leaderLostForVoting(nowMs) || votedForTheRivalThatYielded;
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
        if (behindNeedsUs && lost && !preVoting() && !deferring(nowMs) && !WitnessRules.neverLeads(config, core.membership())) {
            // A peer behind us wants to replace the lost leader; it cannot win, and we hold
            // entries it lacks. Campaign now rather than at our own turn (unless we already back
            // another survivor's pre-vote: two rounds at once could split the vote).
            LOG.info("{} refused the pre-vote of {} (log behind ours); starting its own", core.label(), candidate);
            startPreVote(nowMs);
        } else if (behindNeedsUs && req.getLeaderConnectionBroke() && leaderConnectionLostMs >= 0 && !lost) {
            // The same, but our own hold after the break is not over yet: campaign when it is,
            // rather than a slot later at our own turn.
            campaignAtMs = lostForVotingAtMs();
        } else if (behindNeedsUs && req.getLeaderConnectionBroke() && leaderConnectionLostMs < 0) {
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
     * our own ({@link #lastLeaseHeartbeatMs}).
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
        if (leaderConnectionLostMs >= 0) {
            return lostForVotingAtMs();
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
                && (core.role() == Role.LEADER || !(leaderLostForVoting(nowMs) || votedForTheRivalThatYielded(req)))) {
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
            leaderProcessGone = false;
            lastVoteGrantMs = nowMs;
            LOG.debug("{} grants its vote of term {} to {}", core.label(), core.term(), candidate);
            return voteResponse(false, true, "");
        }
        if (!canVote && logOk && core.role() == Role.CANDIDATE && self.equals(core.votedFor())
                && VoteTally.winsTie(req, candidate, core.log().lastTerm(), core.log().lastIndex(), self)) {
            // A split vote between us: rather than both waiting out the round (a hung voter only
            // answers by timing out), the weaker candidate stands down now and backs the stronger.
            LOG.info("{} yields term {} to {}", core.label(), core.term(), candidate);
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
        handleRequestVoteResponse(to, req, voteResponse(req.getPreVote(), false, "no answer"), false, nowMs);
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
        if (core.role() == Role.FOLLOWER && tally == null && leaderLost(nowMs)) {
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
            core.becomeFollower(resp.getTerm(), null, nowMs);
            return;
        }
        if (resp.getVoterYields() && !req.getPreVote() && core.role() == Role.CANDIDATE && req.getTerm() == core.term()) {
            LOG.info("{}: {} yielded the split vote of term {}; campaigning again", core.label(), from, core.term());
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
        LOG.debug("{} got {} {} from {} for term {}", core.label(), t.preVote ? "pre-vote" : "vote", resp.getGranted() ? "granted" : "refused", from, t.term);
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
                LOST_ROUND_LOG.info(nowMs, "{} lost {} for term {}", core.label(), t.preVote ? "pre-vote" : "vote", t.term);
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
