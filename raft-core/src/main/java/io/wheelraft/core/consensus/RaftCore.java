package io.wheelraft.core.consensus;

import com.google.protobuf.ByteString;
import io.wheelraft.core.CampaignSlots;
import io.wheelraft.core.Closure;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Raft algorithm as a pure state machine (etcd style): requests, answers and timer events
 * go in with the current time; decisions come out as data, in the {@link Ready} batch the shell
 * takes after each call (the core never calls out). It owns no thread, clock, socket or disk, so
 * every rule is a plain deterministic test. Elections are {@link Election}'s, taking a leader's
 * entries {@link FollowerReplication}'s, the membership changes it leads
 * {@link LeaderMembershipChanges}'s. Not thread-safe: the node shell calls it from one lane.
 *
 * <p>Section references are to the Raft paper (§5) and Ongaro's thesis (§9.6 pre-vote, §4.2.3
 * disruptive servers, §6 check-quorum).
 */
public final class RaftCore {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);
    /** One per process: a process that loses its peers would otherwise write a line per group it led. */
    private static final io.wheelraft.core.logging.RateLimitedLog STEP_DOWN_LOG =
            new io.wheelraft.core.logging.RateLimitedLog(LOG, io.wheelraft.core.logging.RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final RaftConfig config;
    private final PeerId self;
    /** Names this node in log lines: its group and peer ({@code group/host:port}), one process hosting many groups. */
    private final NodeLabel label;
    private final RaftLog log;
    /** What this step decided, for the shell to carry out (see Ready). */
    private final Ready out = new Ready();
    private final MembershipLog memberships;

    private long term;
    private PeerId votedFor;
    private Role role = Role.FOLLOWER;
    private PeerId leader;
    private long commitIndex;
    private long reportedCommit;
    /** Fenced after a storage fault (role REPAIRING): no votes, no campaigns, until a leader says it is repaired. */
    private boolean repairing;

    private long lastLeaderContactMs;
    private final Election election;
    private final FollowerReplication follower = new FollowerReplication(this);
    private Replication replication;
    /** Membership changes this node leads: the running one and one held until its first commit. */
    private final LeaderMembershipChanges changes = new LeaderMembershipChanges(this);
    /** Reads waiting for a quorum to confirm a heartbeat round (ReadIndex, thesis §6.4). */
    private final PendingReads reads;
    private final Quiescence quiescence = new Quiescence(this);

    public RaftCore(RaftConfig config, RaftLog log, long term, PeerId votedFor,
                    MembershipLog memberships, long appliedIndex, long nowMs) {
        this(config, log, term, votedFor, memberships, appliedIndex, false, nowMs);
    }

    /** @param repairing the node starts fenced after a storage fault (its meta says so) */
    public RaftCore(RaftConfig config, RaftLog log, long term, PeerId votedFor,
                    MembershipLog memberships, long appliedIndex, boolean repairing, long nowMs) {
        this.repairing = repairing;
        this.config = config;
        this.self = config.self();
        this.label = new NodeLabel(config.groupId(), self);
        this.log = log;
        this.memberships = memberships;
        this.reads = new PendingReads(this);
        this.lastLeaderContactMs = nowMs; // our start counts as contact (Election reads it)
        this.election = new Election(this, config);
        this.transfer = new LeaderTransfer(this);
        this.term = term;
        this.votedFor = votedFor;
        this.commitIndex = appliedIndex;
        this.reportedCommit = appliedIndex;
        this.role = followerRole();
    }

    // ---------------------------------------------------------------- queries

    /**
     * What the steps since the last {@link Ready#clear()} decided: the shell takes it after every
     * call into the core and carries it out (see {@link Ready} for the order it must keep).
     */
    public Ready ready() {
        election.settleSlot();
        out.durableIndex(log.persistedIndex());
        long wake = Math.min(election.nextWakeMs(), reads.quietRoundDeadlineMs());
        if (wake < wakeRequestedMs) {
            wakeRequestedMs = wake;
            out.wakeAt(wake);
        }
        return out;
    }

    /** The earliest wake-up asked of the shell and not yet come ({@link Long#MAX_VALUE}: none). */
    private long wakeRequestedMs = Long.MAX_VALUE;

    /**
     * The wake-up asked for in {@link Ready#wakeAtMs} came (or any later moment): decide held
     * pre-vote answers that are due, and start this follower's ranked pre-vote if its leader has
     * been silent past its turn; on a quiet leader, wake if a read round has waited too long
     * for a quorum.
     */
    public void onWake(long nowMs) {
        onWake(nowMs, wakeRequestedMs);
    }

    /**
     * As {@link #onWake(long)}, from the timer the shell set for the wake-up asked for at
     * {@code requestedAtMs}: only the latest one asked for lets the core ask for the next, so a
     * superseded timer that fires late starts no second chain of wake-ups.
     */
    public void onWake(long nowMs, long requestedAtMs) {
        if (requestedAtMs == wakeRequestedMs) {
            wakeRequestedMs = Long.MAX_VALUE;
        }
        if (!quiet()) { // a wake-up asked for before going quiet is stale
            election.onWake(nowMs);
        } else {
            reads.onWakeWhileQuiet(nowMs); // a quiet leader's read round short of a quorum
        }
    }

    public long term() { return term; }
    public Role role() { return role; }
    public PeerId leader() { return leader; }
    public long commitIndex() { return commitIndex; }
    public RaftLog log() { return log; }
    public Membership membership() { return memberships.current(); }
    public PeerId votedFor() { return votedFor; }

    /** Fenced after a storage fault until a leader says its log holds all it may have acknowledged. */
    public boolean repairing() { return repairing; }

    /** When this node last heard from a leader of its term (or granted a vote), in clock ms. */
    public long lastLeaderContactMs() { return lastLeaderContactMs; }

    public boolean isLeader() {
        return role == Role.LEADER;
    }

    /** Quiet: no timers, no heartbeats of its own, until something wakes it (see {@link Quiescence}). */
    public boolean quiet() {
        return quiescence.quiet();
    }

    /**
     * Lets this group go quiet once its leader has been settled for {@code afterMs} (0: never, the
     * default). Only for a transport that reports silent peers (see {@link Quiescence}).
     */
    public void enableQuiescence(long afterMs) {
        quiescence.enable(afterMs, afterMs);
    }

    /**
     * As {@link #enableQuiescence(long)}, but a leadership that has served nothing since it was
     * won or last went quiet waits only {@code unservedAfterMs} (at most {@code afterMs}).
     */
    public void enableQuiescence(long afterMs, long unservedAfterMs) {
        quiescence.enable(afterMs, unservedAfterMs);
    }

    /**
     * Lets one voter of a group that has never had a leader campaign {@code delayMs} after its
     * start, skipping pre-vote, while the others keep their election timeout (see
     * {@link io.wheelraft.core.NodeOptions#fastFirstElection}). Call once, right after
     * construction; nothing happens unless the node starts at term 0 with an empty log.
     */
    public void enableFastFirstElection(long delayMs, long nowMs) {
        election.enableFastFirstElection(delayMs, nowMs);
    }

    /**
     * Lets a restarted node (term above 0) that has heard no leader {@code delayMs} after its
     * start run a pre-vote then, which wakes a quiet leader, instead of waiting out its election
     * timeout (for a group that may go quiet). Call once, right after construction.
     */
    public void enableRestartProbe(long delayMs, long nowMs) {
        election.enableRestartProbe(delayMs, nowMs);
    }

    public Map<PeerId, Long> followerMatchIndexes() {
        return replication == null ? Map.of() : replication.matchIndexes();
    }

    // ---------------------------------------------------------------- timers

    /**
     * electionTimer fired: start a pre-vote if the leader has been silent for an election timeout
     * (heartbeats only record contact). A reported break is left to its own, ranked timer
     * ({@link #onConnectionLostGraceElapsed}): this timer fires at a random moment, and acting on
     * the break here would start a later-ranked follower early, next to the first. Nor does it
     * restart a pre-vote still waiting for answers (each ends within the vote RPC deadline, or as
     * lost once undecided for an election timeout: {@link Election#endUndecidedPreVote}).
     */
    public void onElectionTimeout(long nowMs) {
        if (quiet()) {
            return; // a firing queued before the timers stopped
        }
        checkTransfer(nowMs);
        if (role == Role.LEADER || role == Role.CANDIDATE) {
            return;
        }
        election.endUndecidedPreVote(nowMs);
        // With a failover turn from the leader, the timer waits for that turn (see Election#silentTurnAtMs).
        if (nowMs >= election.liveness().silentTurnAtMs() && !election.preVoting()
                && !election.deferring(nowMs) && !election.waitsForPreferred(nowMs) && !election.waitsForFreshDesignated(nowMs)) {
            election.startPreVote(nowMs);
        }
    }

    /**
     * stepDownTimer fired on the leader: check-quorum. A group that may go quiet already trusts the
     * transport's per-process watch to learn that a member is gone; it also counts a member that
     * answered this leader and whose process that watch has not reported lost (liveness per
     * process pair). Check-quorum only moves clients on from a cut-off leader: safety never rests
     * on it, and a lease counts only from heartbeats a quorum acknowledged.
     */
    public void onStepDownCheck(long nowMs) {
        if (role == Role.LEADER && !quiet() && !replication.quorumRecentlyActive(memberships.current(), nowMs, quiescence::processLive)) {
            STEP_DOWN_LOG.warn(nowMs, "{} steps down in term {}: no quorum answered within {} ms", label, term, config.electionTimeoutMs());
            becomeFollower(term, null, nowMs);
        }
    }

    public void onHeartbeatTimeout(long nowMs) {
        if (role == Role.LEADER) {
            if (quiescence.leaderTick(nowMs)) {
                return;
            }
            replication.heartbeatAll(commitIndex, nowMs, quiescence.asking(), quiescence.notGone);
            changes.advance(nowMs); // also enforces the catch-up deadline
            transfer.handOverToPreferred(nowMs);
        }
        checkTransfer(nowMs);
    }

    // ---------------------------------------------------------------- elections (see Election)

    /** The election state, for this package's tests (turns, held answers, whether the leader is lost). */
    Election election() {
        return election;
    }

    /** How long after a broken leader connection this follower waits before its pre-vote (see {@link Election}). */
    public long campaignDelayAfterBreakMs() {
        return election.campaignDelayAfterBreakMs();
    }

    /** The bound of the random jitter the shell adds to {@link #campaignDelayAfterBreakMs} (so two alike do not tie). */
    public long campaignJitterBoundMs() {
        return election.campaignJitterBoundMs();
    }

    /** voteTimer fired: the vote round did not finish; step back and try again from pre-vote. */
    public void onVoteTimeout(long nowMs) {
        election.onVoteTimeout(nowMs);
    }

    /**
     * The transport says the connection to {@code endpoint} broke.
     *
     * @return true if it was our leader's: the shell then re-checks after {@link #campaignDelayAfterBreakMs}
     */
    public boolean onConnectionLost(String endpoint, long nowMs) {
        quiescence.forgetSilenceOf(endpoint); // a loss (or a restart, reported as one) is more than a pause
        boolean member = quiescence.endpointLost(endpoint);
        if (member && quiet() && quiescence.lossMatters(endpoint)) {
            // A quiet follower whose leader was there wakes with its last contact as it was: the
            // failover path runs at once. Like a silence report, a loss wakes only the groups it
            // concerns: a quiet leader that still reaches a quorum, or a follower whose leader is
            // elsewhere, has nothing to do. Waking every group with a member there woke all groups
            // of both survivors when a process hosting a member of each died.
            quiescence.wake(false, nowMs);
        }
        return election.onConnectionLost(endpoint, nowMs);
    }

    /**
     * The transport says {@code endpoint} went silent (no reset): groups with a member there stop
     * counting on it to go quiet, and a quiet node wakes; a follower whose leader is there then
     * campaigns as after any silent leader, at its election timeout (the process may only be slow).
     * If that process answers again before anything else happened, the follower goes quiet again
     * (see {@link Quiescence#quietAgainAfterSilence}).
     */
    public void onPeerSilent(String endpoint, long nowMs) {
        if (quiescence.endpointLost(endpoint) && quiet() && quiescence.lossMatters(endpoint)) {
            quiescence.wake(false, nowMs);
            quiescence.rememberSilenceOfLeader(endpoint);
        }
    }

    /**
     * The transport says {@code endpoint} answers again, or restarted: a leader wakes to catch
     * members there up if any is behind (a quiet leader whose members there hold the whole log
     * has nothing for them; a restarted member that does not know its leader asks it for a
     * pre-vote, and that wakes it).
     */
    public void onConnectionRestored(String endpoint, long nowMs) {
        if (quiescence.endpointRestored(endpoint) && role == Role.LEADER
                && (!quiet() || replication.memberBehindAt(endpoint, log.lastIndex()))) {
            quiescence.leaderCatchUp(nowMs);
        }
        quiescence.quietAgainAfterSilence(endpoint);
    }

    /**
     * The transport says the process at {@code endpoint} is gone: after its connection broke, a
     * new connection to it was refused. A follower whose leader was there backs a candidate
     * without waiting for a heartbeat that can no longer come (only a lease, if one may rest on
     * it, is still waited out).
     */
    public void onPeerGone(String endpoint, long nowMs) {
        quiescence.endpointGone(endpoint);
        election.onLeaderProcessGone(endpoint, nowMs);
    }

    /** This follower's wait after a broken leader connection passed: campaign if the leader is still lost. */
    public void onConnectionLostGraceElapsed(long nowMs) {
        election.onConnectionLostGraceElapsed(nowMs);
    }

    /** Answers a RequestVote or pre-vote (§5.2, §5.4.1, thesis §9.6 and §4.2.3) at once, never holding it. */
    public RequestVoteResponse handleRequestVote(RequestVoteRequest req, long nowMs) {
        return election.handleRequestVote(req, nowMs, null);
    }

    /**
     * Answers a RequestVote or pre-vote; a pre-vote this node would grant but for not having
     * seen its leader lost yet may be held for a short window instead (returns null): its answer
     * comes later as a {@link Ready.VoteAnswered} for {@code replyTo}, which the core only stores.
     */
    public RequestVoteResponse handleRequestVote(RequestVoteRequest req, long nowMs, VoteReply replyTo) {
        if (req.getTerm() > term) {
            quiescence.wake(true, nowMs); // a request for an older term (a warm-up probe for term 0) is refused with no effect
        }
        return election.handleRequestVote(req, nowMs, replyTo);
    }

    /** A (pre-)vote request got no answer: it counts as a refusal for deciding when a round is lost. */
    public void handleRequestVoteFailure(PeerId to, RequestVoteRequest req, long nowMs) {
        election.handleRequestVoteFailure(to, req, nowMs);
    }

    /**
     * {@code to} answered our (pre-)vote request that it does not host the group (its process is
     * still starting its groups): asked again shortly while the round runs, not counted as a refusal.
     */
    public void handleRequestVoteNotHosted(PeerId to, RequestVoteRequest req, long nowMs) {
        election.handleRequestVoteNotHosted(to, req, nowMs);
    }

    /**
     * How many times longer than usual the next election attempt waits after rounds failed in a
     * row (1 to 8). The one query of the core that is safe from another thread (the election timer's).
     */
    public int electionBackoff() {
        return election.backoffFactor();
    }

    /** The short retry pause after a lost round ended: try again if the leader is still lost. */
    public void onElectionRetry(long nowMs) {
        election.onElectionRetry(nowMs);
    }

    /**
     * This process bounds how many of its groups campaign at once: the node's rounds take one of
     * {@code slots} (shared by every group of the process) and wait in line when none is free.
     */
    public void shareCampaignSlots(CampaignSlots slots) {
        election.shareCampaignSlots(slots);
    }

    /** The slot this node waited for ({@link Ready#awaitCampaignSlot}) is its: campaign if the leader is still lost. */
    public void onCampaignSlotGranted(long nowMs) {
        election.onCampaignSlotGranted(nowMs);
    }

    /** Handles an answer to our RequestVote or pre-vote. */
    public void handleRequestVoteResponse(PeerId from, RequestVoteRequest req, RequestVoteResponse resp, long nowMs) {
        election.handleRequestVoteResponse(from, req, resp, nowMs);
    }

    /** TimeoutNow from the leader (leader transfer): campaign at once, skipping pre-vote. */
    public TimeoutNowResponse handleTimeoutNow(TimeoutNowRequest req, long nowMs) {
        quiescence.wake(true, nowMs);
        return election.handleTimeoutNow(req, nowMs);
    }

    /** Candidacy: the next term with our own vote, durable first (nothing of the new term exists, here or on the wire, if the write fails). */
    void enterNextTerm() {
        term++;
        out.hardState(term, self);
        votedFor = self;
        setRole(Role.CANDIDATE, null);
    }

    /** Grants our vote of this term to {@code candidate}, durably before the grant leaves. */
    void recordVote(PeerId candidate) {
        votedFor = candidate;
        out.hardState(term, candidate);
    }

    // ---------------------------------------------------------------- role changes

    // ---------------------------------------------------------------- for Quiescence

    Replication replication() { return replication; }
    Election electionState() { return election; }

    /** A quiet follower woke for a reason that vouches for its leader: count it as contact. */
    void leaderContactAt(long nowMs) {
        lastLeaderContactMs = nowMs;
    }

    /**
     * The leader has work of its own in progress: a transfer, a membership change, reads held for
     * the term's first commit. Reads being confirmed are not: their rounds work quiet or awake
     * (see {@link PendingReads}).
     */
    boolean leaderWorkPending() {
        return transfer.active() || changes.changing() || reads.hasAwaitingTermCommit();
    }

    PendingReads reads() { return reads; }

    Role followerRole() {
        if (repairing) {
            return Role.REPAIRING;
        }
        return memberships.current().isLearner(self) ? Role.LEARNER : Role.FOLLOWER;
    }

    void becomeFollower(long newTerm, PeerId newLeader, long nowMs) {
        boolean wasLeader = role == Role.LEADER;
        if (newTerm > term) {
            term = newTerm;
            votedFor = null;
            out.hardState(term, null); // durable before anything of the new term is used (see Ready)
        }
        election.endRound();
        replication = null;
        changes.leadershipLost(newLeader);
        reads.failAll(out, newLeader);
        if (newLeader != null) {
            lastLeaderContactMs = nowMs;
            election.leaderHeard();
        }
        setRole(followerRole(), newLeader);
        checkTransfer(nowMs);
        if (wasLeader) {
            // Our uncommitted entries may still commit under the next leader, or vanish: the shell
            // fails their closures as "leadership lost" (outcome unknown to the client).
            out.event(new Ready.EntriesDiscarded(commitIndex + 1));
        }
    }

    /**
     * The node stops (shutdown or a fatal error): every caller the core still holds ends in this
     * step's batch, so none waits forever. Pending reads fail (no leader hint: this node serves
     * nothing more), and a leader transfer or membership change ends with {@code reason} (a change
     * already in the log may still complete under another leader). Nothing else is decided: no
     * term, vote, message or log write.
     */
    public void onStop(io.wheelraft.core.Status reason) {
        election.leaveSlots();
        changes.stop(reason);
        reads.failAll(out, null);
        transfer.cancel(reason);
    }

    void becomeLeader(long nowMs) {
        election.endRound();
        setRole(Role.LEADER, self);
        replication = new Replication(config, log, out, term, memberships.current(), nowMs);
        changes.leaderStarted();
        // DEBUG: the node logs the change to leader itself (or counts it, in a process of many groups).
        LOG.debug("{} is leader of term {} (last log {})", label, term, log.lastIndex());
        // A fresh entry of our term lets earlier-term entries commit (§5.4.2, Figure 8). If the log
        // holds no membership yet, record it, so that peers joining later learn it from the log.
        LogEntry.Builder first = LogEntry.newBuilder().setTerm(term).setIndex(log.lastIndex() + 1);
        if (memberships.current().index() == 0) {
            first.setType(EntryType.ENTRY_TYPE_CONFIGURATION).setConfiguration(memberships.current().toEntry());
        } else {
            first.setType(EntryType.ENTRY_TYPE_NO_OP);
        }
        appendAsLeader(List.of(first.build()), nowMs);
        changes.resumeJointIfAny(nowMs);
    }

    void setRole(Role newRole, PeerId newLeader) {
        boolean changed = role != newRole || !java.util.Objects.equals(leader, newLeader);
        role = newRole;
        leader = newLeader;
        if (changed) {
            if (quiescence.quiet()) {
                out.event(new Ready.QuietChanged(false));
            }
            quiescence.reset();
            out.event(new Ready.RoleChanged(role, term, leader));
        }
    }

    // ---------------------------------------------------------------- replication: follower side (see FollowerReplication)

    /** A follower's answer and the durable point it must wait for before it may be sent. */
    public record AppendResult(AppendEntriesResponse response, long requiredPersistedIndex) {
    }

    /** Handles AppendEntries from a leader (§5.3). */
    public AppendResult handleAppendEntries(AppendEntriesRequest req, long nowMs) {
        return follower.handleAppendEntries(req, nowMs);
    }

    /** The leader says our log holds all we may have acknowledged before a storage fault: vote again. */
    void repaired() {
        repairing = false;
    }

    /** The leader's commit point, as far as our log matches its own, moved to {@code newCommit}. */
    void commitFromLeader(long newCommit) {
        if (newCommit > commitIndex) {
            commitIndex = newCommit;
            reportCommit();
        }
    }

    // ---------------------------------------------------------------- snapshots (§7)

    /** An InstallSnapshot chunk from {@code from} in {@code reqTerm}: true if accepted (leader checks as for AppendEntries). */
    public boolean acceptSnapshotChunk(PeerId from, long reqTerm, long nowMs) {
        quiescence.wake(true, nowMs);
        return follower.acceptLeader(from, reqTerm, "InstallSnapshot", nowMs);
    }

    /** Does this node already hold everything up to {@code index}, committed and on disk? */
    public boolean holds(long index) {
        return index <= Math.min(commitIndex, log.persistedIndex());
    }

    /**
     * Installs a snapshot from the leader ending at {@code (index, snapshotTerm)} and holding
     * {@code membership}. The log keeps its entries after that point if it holds the same entry
     * (Raft §7), else is dropped whole; the commit point moves to it. The shell loads the state
     * machine and, when this returns true, resets storage to continue at {@code index + 1}.
     */
    public boolean installSnapshot(long index, long snapshotTerm, Membership membership, long nowMs) {
        if (role == Role.LEADER || role == Role.CANDIDATE) {
            throw new IllegalStateException(self + " cannot install a snapshot as " + role.label());
        }
        boolean reset = log.installSnapshot(index, snapshotTerm);
        out.reportDurable();
        if (reset) {
            // The whole log was dropped: past what this node knew committed (identical in every
            // log), its entries may differ from the snapshot's, so acknowledgements of them must
            // fail rather than be released by the snapshot's durable point.
            out.event(new Ready.EntriesDiscarded(Math.min(index, commitIndex) + 1));
            memberships.reset(membership);
            onMembershipChanged(nowMs);
        }
        commitIndex = Math.max(commitIndex, index);
        reportedCommit = Math.max(reportedCommit, index);
        LOG.info("{} installed the snapshot ending at {}/{} ({})", label, index, snapshotTerm, reset ? "log dropped" : "log suffix kept");
        return reset;
    }

    /**
     * This node's own snapshot ending at {@code index} is durable: the log forgets entries up to
     * {@code index - margin}.
     *
     * @return the first index storage must keep, or -1 if nothing is to be dropped
     */
    public long onSnapshotSaved(long index, long margin) {
        return log.compact(index, margin);
    }

    /** The shell finished ({@code ok}) or gave up streaming the snapshot ending at {@code snapshotIndex} to {@code peer}. */
    public void onSnapshotSent(PeerId peer, long requestTerm, long snapshotIndex, boolean ok, long nowMs) {
        if (role != Role.LEADER || requestTerm != term) {
            return;
        }
        replication.onSnapshotDone(peer, snapshotIndex, ok, nowMs, commitIndex);
        if (ok) {
            maybeAdvanceCommit(nowMs);
            changes.advanceIfLeaderChanging(nowMs);
            maybeSendTimeoutNow();
        }
    }

    /** An answer carried {@code otherTerm}: a newer term makes this node a follower (§5.1). */
    public void observeTerm(long otherTerm, long nowMs) {
        if (otherTerm > term) {
            becomeFollower(otherTerm, null, nowMs);
        }
    }

    void trackConfigurations(List<LogEntry> entries, long nowMs) {
        trackConfigurations(entries, false, nowMs);
    }

    /**
     * Records the configurations among {@code entries}; the membership changed (its observers
     * hear of it) if they hold one or if {@code alreadyChanged} (a truncation reverted one).
     */
    void trackConfigurations(List<LogEntry> entries, boolean alreadyChanged, long nowMs) {
        boolean changed = alreadyChanged;
        for (LogEntry e : entries) {
            if (e.getType() == EntryType.ENTRY_TYPE_CONFIGURATION) {
                memberships.add(Membership.fromEntry(e.getConfiguration(), e.getIndex()));
                changed = true;
            }
        }
        if (changed) {
            onMembershipChanged(nowMs);
        }
    }

    private void onMembershipChanged(long nowMs) {
        Membership m = WitnessRules.checkRole(config, memberships.current()); // a witness must be marked as one, a data node not
        out.event(new Ready.MembershipChanged(m));
        if (role == Role.LEADER) {
            replication.updateMembers(m, nowMs);
        } else if (role != Role.CANDIDATE) {
            setRole(followerRole(), leader);
        }
    }

    // ---------------------------------------------------------------- replication: leader side

    /**
     * Appends client commands as entries of the current term.
     *
     * @return the index of the first entry
     * @throws IllegalStateException if this node is not the leader
     */
    public long propose(List<ByteString> commands, long nowMs) {
        if (role != Role.LEADER) {
            throw new IllegalStateException(self + " is not the leader");
        }
        quiescence.leaderBusy(nowMs);
        long first = log.lastIndex() + 1;
        List<LogEntry> entries = new ArrayList<>(commands.size());
        long index = first;
        for (ByteString data : commands) {
            entries.add(LogEntry.newBuilder().setTerm(term).setIndex(index++).setType(EntryType.ENTRY_TYPE_DATA).setData(data).build());
        }
        appendAsLeader(entries, nowMs);
        return first;
    }

    private void appendAsLeader(List<LogEntry> entries, long nowMs) {
        log.append(entries);
        out.logWrite(-1, entries, true);
        trackConfigurations(entries, nowMs);
        replication.replicateAll(commitIndex);
    }

    public void handleAppendEntriesResponse(PeerId from, AppendEntriesRequest req, AppendEntriesResponse resp, long nowMs) {
        if (resp.getTerm() > term) {
            becomeFollower(resp.getTerm(), null, nowMs);
            return;
        }
        if (role != Role.LEADER || req.getTerm() != term) {
            return;
        }
        boolean quietAnswer = req.getQuiesce() && resp.getQuiet();
        if (quietAnswer) {
            quiescence.quietAnswer(from);
        }
        if (replication.onResponse(from, req, resp, nowMs, commitIndex)) {
            maybeAdvanceCommit(nowMs);
        }
        if (req.getHeartbeat()) {
            reads.confirm();
        }
        changes.advanceIfLeaderChanging(nowMs);
        maybeSendTimeoutNow();
        if (quietAnswer && role == Role.LEADER) {
            quiescence.goQuietIfEveryoneAnswered(nowMs);
        }
    }

    public void handleAppendEntriesFailure(PeerId to, AppendEntriesRequest req) {
        if (role == Role.LEADER && req.getTerm() == term) {
            replication.onFailure(to, req);
        }
    }

    /** The disk acknowledged entries up to {@code index} of {@code entryTerm}. */
    public void onPersisted(long index, long entryTerm, long nowMs) {
        out.reportDurable();
        if (!log.stableTo(index, entryTerm)) {
            return;
        }
        if (role == Role.LEADER) {
            maybeAdvanceCommit(nowMs);
        }
        reportCommit();
    }

    private void maybeAdvanceCommit(long nowMs) {
        Membership m = memberships.current();
        long quorumIndex = m.committedIndex(p -> p.equals(self) ? log.persistedIndex() : replication.countedMatch(p));
        // Only an entry of the current term commits by counting replicas (§5.4.2, Figure 8).
        if (quorumIndex > commitIndex && log.term(quorumIndex) == term) {
            commitIndex = quorumIndex;
            reportCommit();
            changes.onCommitAdvanced(nowMs);
            if (role == Role.LEADER) {
                reads.onTermCommitted(nowMs);
            }
        }
    }

    // ---------------------------------------------------------------- membership changes (see LeaderMembershipChanges)

    /**
     * Changes the voting members and learners to {@code target} by joint consensus; the outcome
     * goes to {@code done} through {@link Ready.MembershipChangeDone}.
     */
    public void changeMembership(io.wheelraft.core.Configuration target, Closure done, long nowMs) {
        changes.change(target, done, nowMs);
    }

    // ---------------------------------------------------------------- leader transfer (thesis §3.10)

    private final LeaderTransfer transfer;

    /** True while this leader hands over leadership: it accepts no new tasks. */
    public boolean transferring() {
        return transfer.active() && role == Role.LEADER;
    }

    /**
     * Hands leadership to {@code target}: stop taking tasks, bring it up to date, send TimeoutNow;
     * the outcome goes to {@code done} through {@link Ready.TransferDone} (OK once the target is known to lead,
     * TIMEOUT after an election timeout, when this leader resumes).
     */
    public void transferLeadership(PeerId target, Closure done, long nowMs) {
        transfer.start(target, done, nowMs);
    }

    private void maybeSendTimeoutNow() {
        transfer.maybeSendTimeoutNow();
    }

    private void checkTransfer(long nowMs) {
        transfer.check(nowMs);
    }

    /** A membership change is running or waits for this leader's first commit. */
    boolean membershipChanging() {
        return changes.changing();
    }

    RaftConfig config() { return config; }
    Quiescence quiescence() { return quiescence; }
    MembershipLog memberships() { return memberships; }

    // ---------------------------------------------------------------- for ChangerView

    long appendConfiguration(io.wheelraft.proto.ConfigurationEntry entry, long nowMs) {
        long index = log.lastIndex() + 1;
        appendAsLeader(List.of(LogEntry.newBuilder().setTerm(term).setIndex(index)
                .setType(EntryType.ENTRY_TYPE_CONFIGURATION).setConfiguration(entry).build()), nowMs);
        return index;
    }

    long followerMatch(PeerId peer) { return replication.match(peer); }
    PeerId self() { return self; }
    /** This node's name in log lines ({@code group/host:port}). */
    Object label() { return label; }
    Ready out() { return out; }

    void stepDownAsRemoved(long nowMs) {
        LOG.info("{} is not in the new configuration; stepping down", label);
        becomeFollower(term, null, nowMs);
    }

    // ---------------------------------------------------------------- linearizable reads

    /**
     * Asks for a read index for a batch of reads (opaque handles). On the leader: once it has
     * committed an entry of its term, the current commit index becomes the read index and one
     * heartbeat round confirms leadership (or the lease does, if the node's options choose leases
     * and the lease is valid); then {@link Ready.ReadsConfirmed} comes out. Elsewhere, or if
     * leadership is lost first, {@link Ready.ReadsFailed}.
     */
    public void readIndex(List<ReadHandle> handles, long nowMs) {
        readIndex(handles, config.leaseReads(), nowMs);
    }

    /**
     * As {@link #readIndex(List, long)}, with the way of confirming chosen for these reads:
     * {@code lease} true serves them without a round while the lease ({@link RaftConfig#leaseMs()}
     * past the heartbeats a quorum last acknowledged) is valid, and falls back to a round when it
     * is not; false always runs a round.
     */
    public void readIndex(List<ReadHandle> handles, boolean lease, long nowMs) {
        reads.read(handles, lease, nowMs);
    }

    private void reportCommit() {
        long appliable = Math.min(commitIndex, log.persistedIndex());
        if (appliable > reportedCommit) {
            reportedCommit = appliable;
            out.event(new Ready.Committed(appliable));
        }
    }
}
