package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.LogEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The follower side of replication (§5.3) for a {@link RaftCore}: the checks every message from a
 * leader passes, matching an AppendEntries against our log, appending what is new, following the
 * leader's commit point, and leaving the repair fence when the leader says our log is whole. It
 * exists apart from the core, which keeps the term, role and commit point and changes them only
 * through its own methods, because taking a leader's entries is one job the leader side
 * ({@link Replication}) and elections ({@link Election}) never share. Not thread-safe: owned by the
 * core, on the node's Raft lane.
 */
final class FollowerReplication {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);

    private final RaftCore core;

    FollowerReplication(RaftCore core) {
        this.core = core;
    }

    /** The sender of a message: the known leader's id when it matches (no parsing per append), else parsed. */
    private PeerId peerOf(String id) {
        PeerId known = core.leader();
        return known != null && known.toString().equals(id) ? known : PeerId.parse(id);
    }

    /** Handles AppendEntries from a leader (§5.3). */
    RaftCore.AppendResult handleAppendEntries(AppendEntriesRequest req, long nowMs) {
        if (!req.getQuiesce()) {
            core.quiescence().wake(true, nowMs);
        }
        RaftCore.AppendResult r = appendFromLeader(req, nowMs);
        if (!core.repairing()) {
            return req.getQuiesce() ? core.quiescence().onQuiesceHeartbeat(req, r) : r;
        }
        if (req.getRepairComplete() && r.response().getSuccess() && req.getTerm() == core.term()
                && core.log().persistedIndex() >= req.getPrevLogIndex()) {
            // The leader saw us reach its repair target, and our log matches its own through
            // prevLogIndex, durably: it holds everything we may have acknowledged before the fault.
            core.repaired();
            core.out().repairing(false);
            core.setRole(core.followerRole(), core.leader());
            LOG.info("{} repaired: log holds everything through {}; voting again", core.label(), req.getPrevLogIndex());
            return r;
        }
        return new RaftCore.AppendResult(r.response().toBuilder().setRepairing(true).build(), r.requiredPersistedIndex());
    }

    private RaftCore.AppendResult appendFromLeader(AppendEntriesRequest req, long nowMs) {
        if (!acceptLeader(peerOf(req.getServerId()), req.getTerm(), "AppendEntries", nowMs)) {
            return reject(req, 0, 0);
        }
        core.election().liveness().turnFromLeader(req.getFailoverTurn(), req.getHeartbeat() && !req.getReadRound(), !req.getNoLease(), nowMs);

        long prev = req.getPrevLogIndex();
        if (prev < core.commitIndex()) {
            // Entries up to our commit index match the leader's (log matching of committed entries);
            // skip what we hold and acknowledge at least the commit point.
            return acceptFrom(req, core.commitIndex(), nowMs);
        }
        if (prev > core.log().lastIndex()) {
            return reject(req, 0, core.log().lastIndex() + 1);
        }
        if (!core.log().matchTerm(prev, req.getPrevLogTerm())) {
            long conflictTerm = core.log().term(prev);
            return reject(req, conflictTerm, core.log().firstIndexOfTerm(prev, conflictTerm));
        }
        return acceptFrom(req, prev, nowMs);
    }

    /**
     * The checks every message from a leader passes (§5.1): a stale term is refused; a newer term,
     * or a leader we did not know, makes us its follower; it counts as contact with the leader.
     */
    boolean acceptLeader(PeerId from, long reqTerm, String what, long nowMs) {
        if (reqTerm < core.term()) {
            return false;
        }
        if (core.role() == Role.LEADER && reqTerm == core.term()) {
            LOG.error("{} got {} from {} in its own term {}: election safety violated", core.label(), what, from, core.term());
            return false;
        }
        if (reqTerm > core.term() || core.role() != core.followerRole() || !from.equals(core.leader())) {
            core.becomeFollower(reqTerm, from, nowMs);
        }
        core.leaderContactAt(nowMs);
        core.election().leaderContact();
        return true;
    }

    private RaftCore.AppendResult acceptFrom(AppendEntriesRequest req, long matchedUpTo, long nowMs) {
        List<LogEntry> entries = WitnessRules.toStore(core.config(), req.getEntriesList());
        long prev = req.getPrevLogIndex();
        if (matchedUpTo > prev) {
            int skip = (int) Math.min(entries.size(), matchedUpTo - prev);
            entries = entries.subList(skip, entries.size());
            prev = matchedUpTo;
        }
        if (!entries.isEmpty()) {
            long lastBefore = core.log().lastIndex();
            RaftLog.PersistRequest work = core.log().appendFromLeader(prev, entries);
            if (work != null) {
                long firstNew = work.entries().get(0).getIndex();
                boolean reverted = false;
                if (firstNew <= lastBefore) {
                    core.out().event(new Ready.EntriesDiscarded(firstNew));
                    // A configuration only this log held is gone: the one before it is in effect
                    // again, even when the leader's entries bring none of their own.
                    reverted = core.memberships().truncateAfter(firstNew - 1);
                }
                core.out().logWrite(work.truncateAfter(), work.entries(), false);
                core.trackConfigurations(work.entries(), reverted, nowMs);
            }
        }
        long lastNew = prev + entries.size();
        long newCommit = Math.min(req.getCommittedIndex(), lastNew);
        core.commitFromLeader(newCommit);
        AppendEntriesResponse resp = AppendEntriesResponse.newBuilder()
                .setTerm(core.term()).setSuccess(true).setLastLogIndex(lastNew).setSequence(req.getSequence()).setElectionPriority(core.config().electionPriority()).build();
        return new RaftCore.AppendResult(resp, lastNew);
    }

    private RaftCore.AppendResult reject(AppendEntriesRequest req, long conflictTerm, long conflictIndex) {
        AppendEntriesResponse resp = AppendEntriesResponse.newBuilder()
                .setTerm(core.term()).setSuccess(false).setLastLogIndex(core.log().lastIndex())
                .setConflictTerm(conflictTerm).setConflictIndex(conflictIndex)
                .setSequence(req.getSequence()).setElectionPriority(core.config().electionPriority()).build();
        return new RaftCore.AppendResult(resp, 0);
    }
}
