package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The leader's replication to its followers and learners: one {@link Progress} each, pipelined
 * appends within a bounded window, heartbeats, fast backtracking on conflicts, and the
 * check-quorum question. Lives only while its node leads one term; owned by the node's lane.
 */
final class Replication implements PriorityHandover.Followers {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Replication.class);

    private final RaftConfig config;
    private final RaftLog log;
    private final Ready out;
    private final long term;
    private final Map<PeerId, Progress> progress = new TreeMap<>();
    /** When members whose process is gone last got a heartbeat-timer round (see {@link #heartbeatAll(long, long, boolean, java.util.function.Predicate)}). */
    private long goneMembersRoundMs = Long.MIN_VALUE / 2;
    /** Heartbeat rounds: each broadcast gets a number; answers echo it (ReadIndex, leases). */
    private long heartbeatRound;
    /** When each recent heartbeat-timer round was sent (read rounds do not count for the lease). */
    private final java.util.SortedMap<Long, Long> leaseRoundSentMs = new TreeMap<>();
    /**
     * Until when heartbeat-timer rounds count toward a read lease ({@link #armLease}); before it
     * they go out marked {@code no_lease}. A voter that learns this leader's process is gone need
     * not wait out a lease that no heartbeat it acknowledged could carry (see Election).
     */
    private long leaseArmedUntilMs = Long.MIN_VALUE;
    /** Followers fenced after a storage fault, and how far each must catch up to vote again. */
    private final RepairTracker repairs;
    /** The voters other than this leader, and each one's failover turn as of the latest heartbeat round. */
    private List<PeerId> otherVoters = List.of();
    private Map<PeerId, Integer> turns = Map.of();
    /** The membership in effect; its witnesses get entry headers without payloads, and no failover turn. */
    private Membership membership;
    /** Hands leadership to a caught-up voter of higher election priority. */
    private final PriorityHandover handover;

    Replication(RaftConfig config, RaftLog log, Ready out, long term, Membership membership, long nowMs) {
        this.config = config;
        this.log = log;
        this.out = out;
        this.term = term;
        this.repairs = new RepairTracker(config.self());
        this.handover = new PriorityHandover(config.groupId(), config.self(), config.electionTimeoutMs());
        updateMembers(membership, nowMs);
    }

    /** Adds progress for new members and drops removed ones. */
    void updateMembers(Membership membership, long nowMs) {
        var members = membership.allMembers();
        members.remove(config.self());
        progress.keySet().retainAll(members);
        for (PeerId p : members) {
            progress.computeIfAbsent(p, k -> new Progress(log.lastIndex() + 1, nowMs));
        }
        List<PeerId> voters = new ArrayList<>(membership.voters());
        voters.remove(config.self());
        otherVoters = voters;
        this.membership = membership;
        rankTurns();
    }

    /**
     * Ranks the voters for the next failover: by election priority, then most of the log (match
     * index), then id; fenced (repairing) followers, witnesses and those of priority 0 get none,
     * they may not campaign. Computed once per heartbeat
     * round, so all followers get their turns from one snapshot and no two share one (unless a
     * heartbeat was still on its way when the leader failed).
     */
    private void rankTurns() {
        List<PeerId> ranked = new ArrayList<>(otherVoters.size());
        for (PeerId p : otherVoters) {
            if (progress.containsKey(p) && !repairs.repairing(p) && priority(p) > 0 /* 0 also for a witness */) {
                ranked.add(p);
            }
        }
        ranked.sort(ElectionPriority.preferredFirst(this::priority, this::match));
        Map<PeerId, Integer> t = new java.util.HashMap<>();
        for (int i = 0; i < ranked.size(); i++) {
            t.put(ranked.get(i), i + 1);
        }
        turns = t;
    }

    Map<PeerId, Long> matchIndexes() {
        Map<PeerId, Long> out = new TreeMap<>();
        progress.forEach((p, pr) -> out.put(p, pr.match));
        return Collections.unmodifiableMap(out);
    }

    /** The voter this leader should hand leadership to now, or null (see {@link PriorityHandover#target}). */
    PeerId handoverTarget(long commitIndex, boolean settled, long nowMs) {
        return handover.target(this, commitIndex, settled, nowMs);
    }

    @Override
    public Membership membership() {
        return membership;
    }

    @Override
    public int ownPriority() {
        return ElectionPriority.own(membership, config);
    }

    /** A follower's effective election priority: the configuration's, else the one it advertised (see ElectionPriority). */
    @Override
    public int priority(PeerId peer) {
        Progress pr = progress.get(peer);
        return ElectionPriority.effective(membership, peer, pr == null ? ElectionPriority.UNKNOWN : pr.advertisedPriority);
    }

    /** Answers within the election timeout, and not fenced after a storage fault: fit to take over. */
    @Override
    public boolean healthy(PeerId peer, long nowMs) {
        return recentlyActive(peer, nowMs, p -> false) && !repairs.repairing(peer);
    }

    /** Whether a member hosted at {@code endpoint} holds less of the log than {@code last}. */
    boolean memberBehindAt(String endpoint, long last) {
        for (Map.Entry<PeerId, Progress> e : progress.entrySet()) {
            if (e.getKey().endpoint().equals(endpoint) && e.getValue().match < last) {
                return true;
            }
        }
        return false;
    }

    @Override
    public long match(PeerId peer) {
        Progress pr = progress.get(peer);
        return pr == null ? 0 : pr.match;
    }

    /**
     * The match index that counts towards commitment: 0 for a follower repairing after a storage
     * fault (what it acknowledges may be lost again before it is repaired).
     */
    long countedMatch(PeerId peer) {
        return repairs.repairing(peer) ? 0 : match(peer);
    }

    /** Did {@code peer} answer that it is fenced after a storage fault (and not since that it is repaired)? */
    boolean repairing(PeerId peer) {
        return repairs.repairing(peer);
    }

    /** True when a quorum (the leader counting itself) answered within the election timeout. */
    boolean quorumRecentlyActive(Membership membership, long nowMs, Predicate<PeerId> processLive) {
        return membership.hasQuorum(p -> p.equals(config.self()) || recentlyActive(p, nowMs, processLive));
    }

    /**
     * Answered within an election timeout, or answered this leader before and its process is live
     * by the transport's per-process watch ({@code processLive}). The second keeps a leader whose
     * followers are only slow: when hundreds of groups elect at once after a process dies, the
     * survivors answer late, and deposing their leaders for it made hundreds more elections.
     */
    private boolean recentlyActive(PeerId p, long nowMs, Predicate<PeerId> processLive) {
        Progress pr = progress.get(p);
        return pr != null && (nowMs - pr.lastResponseMs < config.electionTimeoutMs() || pr.answered && processLive.test(p));
    }

    /** Sends whatever each follower can take now (new entries, or a probe). */
    void replicateAll(long commitIndex) {
        for (Map.Entry<PeerId, Progress> e : progress.entrySet()) {
            sendAppends(e.getKey(), e.getValue(), commitIndex);
        }
    }

    /**
     * Heartbeats: an empty append at the follower's known match point, carrying the commit index.
     *
     * @return the round number; {@link #quorumAcked} tells when a quorum has answered it
     */
    long heartbeatAll(long commitIndex, long nowMs) {
        return heartbeatAll(commitIndex, nowMs, false);
    }

    /** As {@link #heartbeatAll(long, long)}; {@code quiesce}: ask the followers that hold the whole log to go quiet (see {@link Quiescence}). */
    long heartbeatAll(long commitIndex, long nowMs, boolean quiesce) {
        return broadcastRound(commitIndex, nowMs, false, quiesce, p -> true);
    }

    /**
     * As above, for the heartbeat timer: a member whose process the transport found gone ({@code
     * everyRound} false: its connection broke and a new one was refused) gets a round only when a
     * quarter of an election timeout has passed since the last one it got. The rounds between
     * would only fail, and after a kill every group the dead process was a member of heartbeats
     * it until the group settles without it and goes quiet: thousands of groups at once. A member
     * only reported lost or silent still gets every round (after a flap, a heartbeat is what tells
     * it its leader lives). The rounds that still go to a gone member find it when it is back;
     * nothing else depends on them (it answers none, so it counts for neither the lease nor
     * check-quorum).
     */
    long heartbeatAll(long commitIndex, long nowMs, boolean quiesce, java.util.function.Predicate<PeerId> everyRound) {
        return broadcastRound(commitIndex, nowMs, false, quiesce, everyRound);
    }

    /**
     * Whether every member the transport has not reported lost holds the whole log ({@code last}),
     * with nothing in flight to it, and none of them is a voter this leader should hand over to by
     * priority: the members' side of being settled (see {@link Quiescence}).
     */
    boolean settledWith(Membership membership, java.util.function.Predicate<PeerId> reachable, long last) {
        int own = ownPriority();
        for (PeerId p : membership.allMembers()) {
            if (p.equals(config.self()) || !reachable.test(p)) {
                continue;
            }
            Progress pr = progress.get(p);
            if (pr == null || pr.match != last || pr.state == Progress.State.SNAPSHOT || pr.inflight > 0 || pr.probeOutstanding
                    || repairs.repairing(p) || (membership.isVoter(p) && priority(p) > own)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The leader woke from quiet: its followers' last answers are old because it sent nothing, not
     * because they are gone. Check-quorum counts the reachable ones as heard now (the lease does
     * not: it counts only from acknowledged heartbeats).
     */
    void wokeUp(java.util.function.Predicate<PeerId> reachable, long nowMs) {
        for (Map.Entry<PeerId, Progress> e : progress.entrySet()) {
            if (reachable.test(e.getKey())) {
                e.getValue().lastResponseMs = Math.max(e.getValue().lastResponseMs, nowMs);
            }
        }
    }

    /**
     * A heartbeat round that only confirms leadership for reads (ReadIndex): it does not extend
     * the lease ({@link #leaseBasisMs}), and followers do not count it for their lease hold.
     * {@code quiesce}: its heartbeats carry {@code quiesce} (the leader is quiet, or asking its
     * followers to go quiet), so a quiet follower answers it without waking. Not to members whose
     * process is gone ({@code everyRound} false) more than the heartbeat timer's rounds go to them.
     */
    long readRound(long commitIndex, long nowMs, boolean quiesce, java.util.function.Predicate<PeerId> everyRound) {
        return broadcastRound(commitIndex, nowMs, true, quiesce, everyRound);
    }

    /**
     * A lease read was asked for: heartbeat-timer rounds count toward the lease from the next one
     * on, for {@link RaftConfig#leaseArmedForMs} (always with {@link RaftConfig#leaseReads}).
     */
    void armLease(long nowMs) {
        leaseArmedUntilMs = Math.max(leaseArmedUntilMs, nowMs + config.leaseArmedForMs());
    }

    private boolean leaseArmed(long nowMs) {
        return config.leaseReads() || nowMs < leaseArmedUntilMs;
    }

    private long broadcastRound(long commitIndex, long nowMs, boolean readRound, boolean quiesce, java.util.function.Predicate<PeerId> everyRound) {
        long round = ++heartbeatRound;
        boolean leaseRound = !readRound && leaseArmed(nowMs);
        if (leaseRound) {
            leaseRoundSentMs.put(round, nowMs);
            // A round sent more than a lease ago can no longer make the lease valid (an answer to it
            // then counts as none, which only shortens the lease): keep only the rounds that can.
            // Idle, that is one or two entries per leader instead of up to 1,024 (many groups per process).
            leaseRoundSentMs.headMap(round - 1024).clear();
            while (leaseRoundSentMs.size() > 1 && leaseRoundSentMs.get(leaseRoundSentMs.firstKey()) < nowMs - config.leaseMs()) {
                leaseRoundSentMs.remove(leaseRoundSentMs.firstKey());
            }
        }
        if (!readRound) {
            rankTurns();
        }
        boolean goneMembersToo = nowMs - goneMembersRoundMs >= config.electionTimeoutMs() / 4;
        if (goneMembersToo) {
            goneMembersRoundMs = nowMs;
        }
        for (Map.Entry<PeerId, Progress> e : progress.entrySet()) {
            if (!goneMembersToo && !everyRound.test(e.getKey())) {
                continue;
            }
            Progress pr = e.getValue();
            if (!readRound && pr.heartbeatUnanswered != 0 && nowMs - pr.heartbeatSentMs < unansweredHeartbeatGapMs()) {
                continue; // it has not answered the last round yet: another would only queue behind it
            }
            long prev = pr.match;
            long prevTerm = log.term(prev);
            if (prev > 0 && prevTerm == 0) {
                prev = 0; // compacted away: a zero point always matches and commits nothing
            }
            AppendEntriesRequest hb = request(e.getKey(), prev, prevTerm, List.of(), Math.min(commitIndex, prev), round, pr.match)
                    .setHeartbeat(true).setReadRound(readRound).setNoLease(!leaseRound)
                    .setQuiesce(quiesce && pr.match == log.lastIndex()).build();
            if (!readRound) {
                pr.heartbeatUnanswered = round;
                pr.heartbeatSentMs = nowMs;
            }
            out.send(new Ready.AppendRequest(e.getKey(), hb));
        }
        return round;
    }

    /** Has a quorum (the leader counting itself) answered heartbeat round {@code round} or a later one? */
    boolean quorumAcked(Membership membership, long round) {
        return membership.hasQuorum(p -> p.equals(config.self()) || ackedRound(p) >= round);
    }

    private long ackedRound(PeerId p) {
        Progress pr = progress.get(p);
        return pr == null ? 0 : pr.ackedRound;
    }

    /**
     * When the heartbeats last acknowledged by a quorum were sent (the leader counts as now): no
     * other leader can be elected before this plus the time voters keep refusing votes. Only
     * rounds sent while the lease was armed count; an answer to another round counts as none.
     */
    long leaseBasisMs(Membership membership, long nowMs) {
        return membership.committedIndex(p -> {
            if (p.equals(config.self())) {
                return nowMs;
            }
            Progress pr = progress.get(p);
            Long sent = pr == null ? null : leaseRoundSentMs.get(pr.ackedLeaseRound); // the latest timer round it answered
            return sent == null ? Long.MIN_VALUE : sent;
        });
    }

    private void sendAppends(PeerId peer, Progress pr, long commitIndex) {
        while (pr.canSend(config.maxInflightAppends())) {
            long prev = pr.next - 1;
            long prevTerm = log.term(prev);
            if (prev < log.baseIndex() || (prev > 0 && prevTerm == 0)) {
                // The entry before `next` was compacted: only a snapshot can catch this follower up.
                pr.becomeSnapshot();
                out.send(new Ready.SnapshotTransfer(peer, term));
                return;
            }
            List<LogEntry> entries = WitnessRules.forPeer(membership.isWitness(peer),
                    log.entries(pr.next, config.maxEntriesPerAppend(), config.maxBytesPerAppend()));
            if (entries.isEmpty() && pr.state == Progress.State.REPLICATE) {
                return; // nothing new; heartbeats keep the follower alive
            }
            long seq = ++pr.sequence;
            out.send(new Ready.AppendRequest(peer, request(peer, prev, prevTerm, entries, commitIndex, seq, pr.match).build()));
            if (pr.state == Progress.State.PROBE) {
                pr.probeOutstanding = true;
                return;
            }
            pr.inflight++;
            pr.next = entries.get(entries.size() - 1).getIndex() + 1;
        }
    }

    /** An append's fields; a heartbeat sets its own flags on the builder before it is built (one message built, not two). */
    private AppendEntriesRequest.Builder request(PeerId to, long prev, long prevTerm, List<LogEntry> entries, long commit, long seq, long match) {
        return AppendEntriesRequest.newBuilder()
                .setGroupId(config.groupId())
                .setServerId(config.self().toString())
                .setPeerId(to.toString())
                .setTerm(term)
                .setPrevLogIndex(prev)
                .setPrevLogTerm(prevTerm)
                .addAllEntries(entries)
                .setCommittedIndex(commit)
                .setSequence(seq)
                .setRepairComplete(repairs.completes(to, prev, match))
                .setFailoverTurn(turns.getOrDefault(to, 0));
    }

    /**
     * Handles an answer to an append of this term.
     *
     * @return true if the follower's match index advanced (the commit index may move)
     */
    boolean onResponse(PeerId peer, AppendEntriesRequest req, AppendEntriesResponse resp, long nowMs, long commitIndex) {
        Progress pr = progress.get(peer);
        if (pr == null) {
            return false;
        }
        pr.lastResponseMs = nowMs;
        pr.answered = true;
        if (resp.hasElectionPriority()) {
            pr.advertisedPriority = resp.getElectionPriority();
        }
        boolean repaired = repairs.onAnswer(peer, resp.getRepairing(), log.lastIndex());
        boolean heartbeat = req.getHeartbeat();
        if (heartbeat) {
            heartbeatEnded(pr, req);
            // Any answer in our term (even a log mismatch) shows the follower accepts us as leader.
            pr.ackedRound = Math.max(pr.ackedRound, req.getSequence());
            if (!req.getReadRound()) {
                pr.ackedLeaseRound = Math.max(pr.ackedLeaseRound, req.getSequence());
            }
            // The follower is reachable again: a probe lost earlier (say in a partition) must not
            // block catch-up until its RPC times out, so probe again now.
            if (pr.state == Progress.State.PROBE) {
                pr.probeOutstanding = false;
            }
        }
        if (!heartbeat) {
            releaseSlot(pr, req);
        }
        boolean advanced = repaired; // its match counts towards commitment from now on
        if (resp.getSuccess()) {
            long newMatch = resp.getLastLogIndex();
            if (newMatch > pr.match) {
                pr.match = newMatch;
                pr.next = Math.max(pr.next, newMatch + 1);
                advanced = true;
            }
            if (pr.state == Progress.State.PROBE && !heartbeat) {
                pr.becomeReplicate();
            }
        } else {
            lowerMatchIfShrunk(peer, pr, req, resp);
            if (req.getPrevLogIndex() >= pr.match) {
                // A real conflict (stale rejections below match are ignored): jump back using the hint.
                pr.becomeProbe();
                pr.next = Math.max(pr.match + 1, Math.min(nextFromConflictHint(resp), req.getPrevLogIndex()));
            }
        }
        sendAppends(peer, pr, commitIndex);
        return advanced;
    }

    /**
     * A follower whose log is shorter than the match recorded for it lost entries it had
     * acknowledged (a storage fault: a dropped WAL tail, a log reset after damage). Until now it
     * was never caught up: its rejections fell below match and were taken as stale. Its log
     * still holds a prefix of ours (it only ever took our entries in this term), so match drops
     * to its last index and replication resumes from there. Only a rejection at or above match,
     * or one flagged repairing, is trusted: an older rejection overtaken by a success is not.
     */
    private void lowerMatchIfShrunk(PeerId peer, Progress pr, AppendEntriesRequest req, AppendEntriesResponse resp) {
        long holds = resp.getLastLogIndex();
        if (holds >= pr.match || !(resp.getRepairing() || req.getPrevLogIndex() >= pr.match)) {
            return;
        }
        // A reordered network can also produce this (a rejection sent before a success that
        // overtook it): lowering match is then only a harmless resend, so only a repairing
        // follower's shrink is a warning.
        if (resp.getRepairing()) {
            LOG.warn("{}: {} holds only up to {} though it acknowledged {}; resending from {}", config.self(), peer, holds, pr.match, holds + 1);
        } else {
            LOG.info("{}: {} holds only up to {} though it acknowledged {}; resending from {}", config.self(), peer, holds, pr.match, holds + 1);
        }
        pr.match = Math.max(0, holds);
        if (holds > req.getPrevLogIndex()) {
            // The conflict path after this does not run for a rejection below the new match.
            pr.becomeProbe();
            pr.next = pr.match + 1;
        }
    }

    /**
     * An append got no answer (peer unreachable, timed out, refused). Heartbeats drive the retry:
     * the follower gets no append until it answers a heartbeat (etcd raft pauses its probe on
     * MsgUnreachable alike). Without the pause every proposal batch sent the follower a new probe,
     * its entries read back from storage, to fail again at once: with a member's process gone,
     * each write to each of its groups paid for that.
     */
    void onFailure(PeerId peer, AppendEntriesRequest req) {
        Progress pr = progress.get(peer);
        if (pr == null) {
            return;
        }
        if (req.getHeartbeat()) {
            heartbeatEnded(pr, req);
            return;
        }
        releaseSlot(pr, req);
        if (pr.state == Progress.State.REPLICATE) {
            pr.becomeProbe(); // later appends in the window cannot match once one is lost
            pr.next = pr.match + 1;
        }
        if (pr.state == Progress.State.PROBE) {
            pr.probeOutstanding = true; // paused: a heartbeat answer resumes it (onResponse)
        }
    }

    /**
     * How long a heartbeat-timer round may go unanswered before the next round goes to that
     * follower anyway: half an election timeout. Until then a follower that has not answered the
     * last round gets none: on a process too busy to answer, each round sent meanwhile only waited
     * behind the others as a pending call (a restart at 10,000 groups left 100,000-350,000 of them
     * pending on each other process, and their collections took a quarter of its CPU), and a
     * follower that answers at all still hears from us well within its election timeout. Read
     * rounds are always sent; a skipped round only means a shorter lease, which is safe.
     */
    private long unansweredHeartbeatGapMs() {
        return Math.max(1, config.electionTimeoutMs() / 2);
    }

    /** An answer or a failure of a heartbeat: the round it belongs to, or a later one, is no longer unanswered. */
    private static void heartbeatEnded(Progress pr, AppendEntriesRequest req) {
        if (pr.heartbeatUnanswered != 0 && req.getSequence() >= pr.heartbeatUnanswered) {
            pr.heartbeatUnanswered = 0;
        }
    }

    private static void releaseSlot(Progress pr, AppendEntriesRequest req) {
        if (pr.state == Progress.State.PROBE) {
            pr.probeOutstanding = false;
        } else if (req.getEntriesCount() > 0 && pr.inflight > 0) {
            pr.inflight--;
        }
    }

    /** Where to resume after a conflict: past our last entry of the follower's conflicting term, or its first index of it. */
    private long nextFromConflictHint(AppendEntriesResponse resp) {
        if (resp.getConflictTerm() == 0) {
            return Math.max(1, resp.getConflictIndex());
        }
        long ours = log.lastIndexOfTerm(resp.getConflictTerm());
        return ours > 0 ? ours + 1 : Math.max(1, resp.getConflictIndex());
    }

    /**
     * The shell finished streaming a snapshot ending at {@code snapshotIndex} to {@code peer}
     * ({@code ok}) or gave up. On success the follower holds everything up to it; on failure the
     * next heartbeat answer from the follower retries (a probe waits until then, so an
     * unreachable follower does not make the leader resend at once).
     */
    void onSnapshotDone(PeerId peer, long snapshotIndex, boolean ok, long nowMs, long commitIndex) {
        Progress pr = progress.get(peer);
        if (pr == null) {
            return;
        }
        if (ok) {
            // Whatever state a stale answer left the progress in, the follower now durably holds
            // everything up to the snapshot.
            pr.lastResponseMs = nowMs;
            pr.answered = true;
            pr.match = Math.max(pr.match, snapshotIndex);
            if (pr.state == Progress.State.SNAPSHOT) {
                pr.becomeProbe();
            }
            pr.next = Math.max(pr.next, pr.match + 1);
            sendAppends(peer, pr, commitIndex);
        } else if (pr.state == Progress.State.SNAPSHOT) {
            pr.becomeProbe();
            pr.next = pr.match + 1;
            pr.probeOutstanding = true;
        }
    }
}
