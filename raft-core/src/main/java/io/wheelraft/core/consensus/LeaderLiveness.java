package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

/**
 * What a follower knows about whether its leader is still there, and from when it may act on
 * losing it: the leader's silence, a broken connection the transport reported, the finding that
 * the leader's process is gone, the failover turn the leader told it, and the heartbeats a read
 * lease may rest on. {@link Election} decides from this when to campaign, {@link VoteAnswers}
 * when to back someone else's candidacy. Reset whenever a leader of the current term speaks.
 *
 * <p>Not thread-safe: owned by the core, on the node's Raft lane.
 */
final class LeaderLiveness {

    private final RaftCore core;
    private final RaftConfig config;
    /** When the transport said the leader's connection broke; -1 when it has not (since the last contact). */
    private long connectionLostMs = -1;
    /**
     * After the leader's connection broke, the transport found its process gone (a new connection
     * was refused): no heartbeat of that leader can still be on its way, so the rest of the hold
     * protects only a lease ({@link #lastLeaseHeartbeatMs}); reset with the break.
     */
    private boolean processGone;
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
    /** Our failover turn as the leader last told it (0: none), and which leader and term told it. */
    private int turn;
    private PeerId turnLeader;
    private long turnTerm;
    /**
     * Fast first election is on and this node has followed no leader: it started at term 0 (so it
     * never voted nor acknowledged anything, durably or not: a term above 0 is durable before
     * anything of it is answered) and no leader has spoken to it since. No leader's lease rests on
     * it and it has no leader to be disrupted, so it need not wait out its election timeout before
     * backing a candidate (see {@link #lostForVoting}).
     */
    private boolean followedNoLeader;

    LeaderLiveness(RaftCore core, RaftConfig config) {
        this.core = core;
        this.config = config;
        this.lastHeartbeatMs = core.lastLeaderContactMs(); // our start counts as one (we may have acknowledged one just before)
        this.lastLeaseHeartbeatMs = lastHeartbeatMs;
    }

    /** A leader of our term spoke: a reported break and a gone process are old news. */
    void leaderHeard() {
        followedNoLeader = false;
        connectionLostMs = -1;
        processGone = false;
    }

    /** This node starts a fresh group (term 0, empty log) with fast first election on. */
    void startedFresh() {
        followedNoLeader = true;
    }

    /** Started fresh and no leader has spoken since (see {@link #startedFresh}). */
    boolean followedNoLeader() {
        return followedNoLeader;
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

    /** Our failover turn if the current leader of the current term told us one, else 0. */
    int knownTurn() {
        return turn > 0 && turnTerm == core.term() && turnLeader != null && turnLeader.equals(core.leader()) ? turn : 0;
    }

    /**
     * Has this follower lost its leader, for starting a pre-vote: silent for an election timeout,
     * or its connection broke (the turn order is kept by when the shell calls
     * {@link Election#onConnectionLostGraceElapsed}, see {@link Election#campaignDelayAfterBreakMs}).
     */
    boolean leaderLost(long nowMs) {
        return nowMs - core.lastLeaderContactMs() >= config.electionTimeoutMs() || connectionLostMs >= 0;
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
     * Whether, as a voter, we back a candidate against our leader: silent for an election timeout,
     * or we saw its connection break ourselves and {@link RaftConfig#brokenLeaderHoldMs} passed
     * since its last heartbeat reached us. The leader's lease relies on that hold (see
     * {@link RaftConfig#leaseMs}): it counts from the sending of heartbeats a quorum acknowledged,
     * and such a quorum shares a voter with any election quorum.
     */
    boolean lostForVoting(long nowMs) {
        return nowMs >= lostForVotingAtMs();
    }

    /**
     * When {@link #lostForVoting} becomes true, if nothing is heard meanwhile. After a break the
     * hold has two jobs: it outlasts any lease the leader may rest on our answers, and it lets a
     * live leader's next heartbeat come first when the connection only flapped. Once the leader's
     * process is known gone, only the first is left, and only for heartbeats that could carry a
     * lease.
     */
    long lostForVotingAtMs() {
        if (followedNoLeader) {
            return Long.MIN_VALUE / 2; // no lease rests on us, no leader of ours can be disrupted
        }
        long silent = core.lastLeaderContactMs() + config.electionTimeoutMs();
        if (connectionLostMs < 0) {
            return silent;
        }
        long since = processGone ? lastLeaseHeartbeatMs : lastHeartbeatMs;
        return Math.min(silent, since + config.brokenLeaderHoldMs());
    }

    /** Records that the leader's connection broke; false if a break is already recorded (the first one counts). */
    boolean connectionBroke(long nowMs) {
        if (connectionLostMs >= 0) {
            return false;
        }
        connectionLostMs = nowMs;
        return true;
    }

    /** Have we seen our leader's connection break (since the last contact)? */
    boolean sawConnectionBreak() {
        return connectionLostMs >= 0;
    }

    /** Do we know our leader's process is gone (after its connection broke)? */
    boolean processGone() {
        return processGone;
    }

    /** The transport found the leader's process gone after its connection broke; false if no break is recorded or it was known. */
    boolean processFoundGone() {
        if (connectionLostMs < 0 || processGone) {
            return false;
        }
        processGone = true;
        return true;
    }

    /** A candidate's word that our leader's connection broke and its process is gone (see VoteAnswers#answer). */
    void takeWordThatLeaderIsGone(long nowMs) {
        if (connectionLostMs < 0) {
            connectionLostMs = nowMs;
        }
        processGone = true;
    }

    /** We granted a real vote: the broken-connection path about the old leader ends. */
    void forgetConnectionBreak() {
        connectionLostMs = -1;
        processGone = false;
    }

    /** How long ago the last heartbeat reached us (for the log). */
    long sinceLastHeartbeatMs(long nowMs) {
        return nowMs - lastHeartbeatMs;
    }
}
