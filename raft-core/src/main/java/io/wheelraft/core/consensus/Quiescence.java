package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;

import java.util.HashSet;
import java.util.Set;

/**
 * Quiet groups (in the spirit of TiKV's hibernated regions): a settled group stops its timers and
 * heartbeats until something wakes it, so that a process hosting many mostly idle groups spends
 * nothing on the idle ones. Only on a transport that watches each remote process with one
 * heartbeat per process pair ({@link io.wheelraft.core.spi.RaftTransport#reportsSilentPeers}):
 * a quiet follower learns that its leader died or was cut off from that transport's report, not
 * from missing heartbeats of its own group.
 *
 * <p>Entering (leader-driven, two steps):
 * <ol>
 *   <li>The leader is <em>settled</em>: everything in its log is of a committed prefix that
 *       includes an entry of its term and is durable here; no read, transfer or membership change
 *       is pending; the configuration is not joint; no voter would take leadership from it by
 *       priority; and every member the transport has not reported lost holds the whole log. Once
 *       it has stayed so for {@code quiesceAfterMs}, its heartbeats carry {@code quiesce}.</li>
 *   <li>A follower that gets such a heartbeat, holds the whole log (its last index is the
 *       heartbeat's point and its commit index) and has no election business of its own goes
 *       quiet and answers {@code quiet}. When every reachable member has answered so, and they
 *       with the leader form a quorum, the leader goes quiet at its next heartbeat tick.</li>
 * </ol>
 *
 * <p>Waking: a proposal, a transfer or a membership change on the leader, and a read whose quiet
 * round found no quorum in time (reads neither wake a group nor keep it awake: a quiet leader's
 * read rounds are quiesce heartbeats, which followers answer without waking; see
 * {@link PendingReads}); any vote or
 * pre-vote request, TimeoutNow, snapshot, or append that is not a quiesce heartbeat; a role
 * change; a member's process reported lost (the leader re-settles without it, so a group with
 * one process down still goes quiet) or back (it is caught up). A quiet follower told that its
 * leader's process is lost wakes with its last contact as it was, so the usual failover path
 * runs at once; woken for any other reason it counts the wake as contact (the leader's process
 * was alive, or it would have been reported), which only lengthens how long it refuses votes.
 *
 * <p>Safety does not depend on any of this: quiet nodes only do less. The leader's lease counts
 * from heartbeats a quorum acknowledged, so a quiet leader's lease runs out as if it had lost
 * its followers and a woken leader confirms reads with a round; voters' holds count from the
 * last heartbeat they really received.
 */
final class Quiescence {

    private final RaftCore core;
    /** How long a leader that served something must be settled before it asks its followers to go quiet; 0: never. */
    private long quiesceAfterMs;
    /** The same for a leadership that has served nothing since it was won or last went quiet (at most {@link #quiesceAfterMs}). */
    private long unservedAfterMs;
    /** A proposal, read, transfer or membership change came since the leadership was won or last went quiet. */
    private boolean served;
    private boolean quiet;
    /** Since when the leader has been settled without interruption. */
    private long settledSinceMs = Long.MAX_VALUE;
    /** The leader's heartbeats carry {@code quiesce}. */
    private boolean asking;
    // Both sets are the shared empty set until something is added, and go back to it when emptied:
    // a process hosting many groups keeps one Quiescence per group, almost all quiet with nothing
    // lost.
    /** Members that answered a quiesce heartbeat of this leadership with {@code quiet}; not needed once quiet. */
    private Set<PeerId> quietMembers = Set.of();
    /** Remote endpoints the transport reported lost and not back yet. */
    private Set<String> lostEndpoints = Set.of();
    /** Of those, the ones whose process the transport found gone (a new connection was refused). */
    private Set<String> goneEndpoints = Set.of();

    /**
     * How things stood when this quiet follower woke only because its leader's process went
     * silent; null when not so woken (see {@link #quietAgainAfterSilence}). One reference, null in
     * almost every replica, rather than four fields in each.
     */
    private SilenceWake silenceWake;

    private record SilenceWake(String endpoint, long term, long lastIndex, long leaderContactMs) {
    }

    Quiescence(RaftCore core) {
        this.core = core;
    }

    /**
     * A settled leader asks followers to go quiet after {@code afterMs} (0 or less: never), or
     * after {@code unservedAfterMs} if it has served nothing since it was won or last went quiet.
     * Why two: the wait keeps a group that is being written from going quiet between two writes
     * (each wake costs a heartbeat round); a leadership that has served nothing (a start-up or a
     * failover election, a member caught up after a restart) predicts no traffic, and every
     * heartbeat round it sends while it waits is work for nothing. At a start of 10,000 groups
     * per process the full wait kept each group awake for over a second after its election, and
     * the start-up paced on awake groups spent most of its time waiting for them.
     */
    void enable(long afterMs, long unservedAfterMs) {
        this.quiesceAfterMs = Math.max(0, afterMs);
        this.unservedAfterMs = Math.max(0, Math.min(unservedAfterMs, this.quiesceAfterMs));
    }

    boolean quiet() {
        return quiet;
    }

    /**
     * Whether check-quorum may count {@code p}'s process as live: only in a group that may go quiet
     * (the node then checks at start that the transport reports silent peers) and while no report
     * of that process being lost or silent stands.
     */
    boolean processLive(PeerId p) {
        return quiesceAfterMs > 0 && reachable(p);
    }

    /** Heartbeats carry {@code quiesce} (to the members that hold the whole log). */
    boolean asking() {
        return asking;
    }

    boolean reachable(PeerId p) {
        return !hasEndpointIn(lostEndpoints, p);
    }

    // ------------------------------------------------------------ transport reports

    /** @return true if a member of the group is hosted at {@code endpoint} */
    boolean endpointLost(String endpoint) {
        if (lostEndpoints.isEmpty()) {
            lostEndpoints = new HashSet<>(4);
        }
        lostEndpoints.add(endpoint);
        return hostsMember(endpoint);
    }

    /** @return true if a member of the group is hosted at {@code endpoint} */
    boolean endpointRestored(String endpoint) {
        if (!lostEndpoints.isEmpty() && lostEndpoints.remove(endpoint) && lostEndpoints.isEmpty()) {
            lostEndpoints = Set.of();
        }
        if (!goneEndpoints.isEmpty() && goneEndpoints.remove(endpoint) && goneEndpoints.isEmpty()) {
            goneEndpoints = Set.of();
        }
        return hostsMember(endpoint);
    }

    /** The process at {@code endpoint}, reported lost, refused a new connection: it is gone until reported back. */
    void endpointGone(String endpoint) {
        if (!hostsMember(endpoint)) {
            return;
        }
        if (goneEndpoints.isEmpty()) {
            goneEndpoints = new HashSet<>(4);
        }
        goneEndpoints.add(endpoint);
    }

    /** Whether {@code p}'s process is reported gone (and not back since): heartbeats to it can only fail. */
    boolean gone(PeerId p) {
        return hasEndpointIn(goneEndpoints, p);
    }

    /** The members that get every heartbeat-timer round: all but those whose process is gone (one object, asked per round). */
    final java.util.function.Predicate<PeerId> notGone = p -> !gone(p);

    /**
     * Whether {@code p} lives at one of {@code endpoints}, without building its {@code host:port}
     * ({@link PeerId#hasEndpoint}): asked per member and heartbeat round, and the sets hold at most
     * the few endpoints reported lost.
     */
    private static boolean hasEndpointIn(Set<String> endpoints, PeerId p) {
        for (String e : endpoints) {
            if (p.hasEndpoint(e)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether losing {@code endpoint} (the transport reports it silent) concerns this quiet node: a
     * follower's leader is there, or a leader no longer reaches a quorum of voters. Only then does
     * it wake. A process reported silent hosts a member of every group the processes share, and
     * under load a live process can miss its liveness window: waking every such group (thousands)
     * made each of them heartbeat and elect again, which kept the processes too busy to answer
     * in time, so the next window was missed too. A quiet leader that still reaches a quorum
     * needs nothing from the lost member; the lost member's own process decides for its replicas.
     */
    boolean lossMatters(String endpoint) {
        if (core.role() == Role.LEADER) {
            return !core.membership().hasQuorum(p -> p.equals(core.self()) || reachable(p));
        }
        PeerId leader = core.leader();
        return leader == null || leader.endpoint().equals(endpoint);
    }

    private boolean hostsMember(String endpoint) {
        PeerId self = core.self();
        return core.membership().anyMember(p -> !p.equals(self) && p.hasEndpoint(endpoint));
    }

    /**
     * This quiet follower just woke because its leader's process at {@code endpoint} went silent
     * (no reset): remember how things stood, in case that process answers again before anything
     * happens here.
     */
    void rememberSilenceOfLeader(String endpoint) {
        PeerId leader = core.leader();
        if (core.role() != Role.FOLLOWER || leader == null || !leader.hasEndpoint(endpoint)) {
            return;
        }
        silenceWake = new SilenceWake(endpoint, core.term(), core.log().lastIndex(), core.lastLeaderContactMs());
    }

    /** {@code endpoint} was lost or restarted (reported as a loss): no going back to quiet on its return. */
    void forgetSilenceOf(String endpoint) {
        if (silenceWake != null && silenceWake.endpoint().equals(endpoint)) {
            silenceWake = null;
        }
    }

    /**
     * {@code endpoint} answers again as the same process (a restart is reported as a loss first):
     * a follower woken only by its silence goes quiet again if nothing happened meanwhile: same
     * term, same leader there, no word from it, its log and commit index as they were (the whole
     * log, committed, durable), and no election business of its own (no round started, none
     * planned). Why: a process that pauses longer than the silence window (a full collection at
     * 100,000 groups took over a second) woke the followers of every group it led on the others,
     * and at their election timeout they deposed its leaders, though it was back: thousands of
     * elections for a pause, which made the next pause longer. Its leaders stayed quiet through
     * it and still count these followers as quiet, so going back is returning to the state the
     * group agreed on. Safety does not rest on it: a quiet node only does less.
     */
    void quietAgainAfterSilence(String endpoint) {
        SilenceWake then = silenceWake;
        if (then == null || !then.endpoint().equals(endpoint)) {
            return;
        }
        silenceWake = null;
        RaftLog log = core.log();
        long last = log.lastIndex();
        PeerId leader = core.leader();
        if (!quiet && quiesceAfterMs > 0 && core.role() == Role.FOLLOWER && leader != null && leader.hasEndpoint(endpoint)
                && core.term() == then.term() && last == then.lastIndex() && core.lastLeaderContactMs() == then.leaderContactMs()
                && core.commitIndex() == last && log.persistedIndex() == last && core.electionState().idle()) {
            goQuiet();
        }
    }

    // ------------------------------------------------------------ leader

    /**
     * Something for the leader to serve (a proposal, a transfer, a membership change, a read whose quiet round went unanswered):
     * wake if quiet, and start the quiet countdown again, the full one.
     */
    void leaderBusy(long nowMs) {
        wake(true, nowMs);
        busy();
        served = true;
    }

    /** A member to catch up (its process is back): wake if quiet and start the countdown again, without counting it as served. */
    void leaderCatchUp(long nowMs) {
        wake(true, nowMs);
        busy();
    }

    /**
     * The leader is unsettled for now: the quiet countdown starts again and followers that went
     * quiet are not counted any more (the append or heartbeat that follows wakes them).
     */
    private void busy() {
        settledSinceMs = Long.MAX_VALUE;
        asking = false;
        quietMembers = Set.of();
    }

    /** A member answered a quiesce heartbeat with {@code quiet}. */
    void quietAnswer(PeerId from) {
        if (asking) {
            if (quietMembers.isEmpty()) {
                quietMembers = new HashSet<>(4);
            }
            quietMembers.add(from);
        }
    }

    /**
     * After a {@code quiet} answer was handled: the leader goes quiet now if that answer was the
     * last it waited for, instead of at its next heartbeat tick. Why: a process starting
     * thousands of groups paces their start on how many are still awake, and each leadership
     * stayed awake, heartbeat timer and all, one more interval after its group had agreed to go
     * quiet. The conditions are the tick's: still asking (settled for the whole wait, nothing
     * served since), still settled, every reachable member quiet.
     */
    void goQuietIfEveryoneAnswered(long nowMs) {
        if (!quiet && asking && settled() && everyReachableMemberQuiet()) {
            leaderGoesQuiet(nowMs);
        }
    }

    /**
     * The leader's heartbeat tick: decides whether it goes quiet now (true: send nothing), starts
     * asking, or stays as it is.
     */
    boolean leaderTick(long nowMs) {
        if (quiesceAfterMs <= 0 || quiet) {
            return quiet;
        }
        if (!settled()) {
            busy();
            return false;
        }
        settledSinceMs = Math.min(settledSinceMs, nowMs);
        if (nowMs - settledSinceMs < (served ? quiesceAfterMs : unservedAfterMs)) {
            return false;
        }
        if (asking && everyReachableMemberQuiet()) {
            leaderGoesQuiet(nowMs);
            return true;
        }
        asking = true;
        return false;
    }

    private void leaderGoesQuiet(long nowMs) {
        core.reads().leaderGoesQuiet(nowMs);
        goQuiet();
    }

    private void goQuiet() {
        quiet = true;
        served = false;
        quietMembers = Set.of(); // counted only on the way to quiet; a wake starts counting afresh
        core.log().releaseRecentEntries();
        core.out().releaseArraysOnClear();
        core.out().event(new Ready.QuietChanged(true));
    }

    /** Nothing in flight, every reachable member holds the whole log (see the class comment). */
    private boolean settled() {
        Membership m = core.membership();
        RaftLog log = core.log();
        long last = log.lastIndex();
        return core.commitIndex() == last && log.persistedIndex() == last && log.term(last) == core.term() && !m.isJoint()
                && !core.leaderWorkPending() && core.replication().settledWith(m, this::reachable, last);
    }

    private boolean everyReachableMemberQuiet() {
        Membership m = core.membership();
        for (PeerId p : m.allMembers()) {
            if (!p.equals(core.self()) && reachable(p) && !quietMembers.contains(p)) {
                return false;
            }
        }
        return m.hasQuorum(p -> p.equals(core.self()) || quietMembers.contains(p));
    }

    // ------------------------------------------------------------ follower

    /**
     * A quiesce heartbeat was handled with answer {@code r}: this follower goes quiet, and says so,
     * if it holds the whole log (through the heartbeat's point), knows it committed, and has no
     * election business of its own.
     */
    RaftCore.AppendResult onQuiesceHeartbeat(AppendEntriesRequest req, RaftCore.AppendResult r) {
        RaftLog log = core.log();
        long last = log.lastIndex();
        boolean idle = quiesceAfterMs > 0 && r.response().getSuccess() && req.getTerm() == core.term()
                && (core.role() == Role.FOLLOWER || core.role() == Role.LEARNER)
                && req.getPrevLogIndex() == last && core.commitIndex() == last && log.persistedIndex() == last
                && core.electionState().idle();
        if (!idle) {
            return r;
        }
        if (!quiet) {
            goQuiet();
        }
        return new RaftCore.AppendResult(r.response().toBuilder().setQuiet(true).build(), r.requiredPersistedIndex());
    }

    // ------------------------------------------------------------ both

    /**
     * Ends quietness, if quiet. {@code contact}: a follower counts the wake as contact with its
     * leader (any wake but a lost leader: the transport would have reported its process). A leader
     * counts its reachable followers as heard (check-quorum only) and heartbeats them at once.
     */
    void wake(boolean contact, long nowMs) {
        if (!quiet) {
            return;
        }
        quiet = false;
        core.out().event(new Ready.QuietChanged(false));
        if (core.role() == Role.LEADER) {
            busy();
            core.replication().wokeUp(this::reachable, nowMs);
            core.replication().heartbeatAll(core.commitIndex(), nowMs, false);
        } else if (contact) {
            core.leaderContactAt(nowMs);
        }
    }

    /** A new role or leadership: nothing asked or answered before counts. */
    void reset() {
        quiet = false;
        served = false;
        silenceWake = null;
        busy();
    }
}
