package io.wheelraft.core.consensus;

import io.wheelraft.core.Closure;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.proto.TimeoutNowRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader transfer (thesis §3.10), asked for or by priority (see {@link PriorityHandover}): the
 * transfer in progress, its target, its caller, its deadline, and whether TimeoutNow went out.
 * The leader refuses new tasks while it is active. Owned by the Raft lane.
 */
final class LeaderTransfer {

    private static final Logger LOG = LoggerFactory.getLogger(LeaderTransfer.class);

    private final RaftCore core;
    private final Ready out;
    private PeerId target;
    private Closure done;
    private long deadlineMs;
    private boolean timeoutNowSent;

    LeaderTransfer(RaftCore core) {
        this.core = core;
        this.out = core.out();
    }

    /** Starts a transfer to {@code target}, or answers {@code done} at once if there is none to make (see {@link RaftCore#transferLeadership}). */
    void start(PeerId target, Closure done, long nowMs) {
        if (tryBegin(target, done, nowMs)) {
            LOG.info("{} transfers leadership of term {} to {}", core.label(), core.term(), target);
        }
    }

    /**
     * {@link #start} without its line: true if the transfer began, false if {@code done} was
     * answered at once. A priority handover says it in its own rate-limited line (see {@link PriorityHandover}).
     */
    private boolean tryBegin(PeerId target, Closure done, long nowMs) {
        Replication replication = core.replication();
        Status answerNow = core.role() != Role.LEADER ? Status.notLeader(core.leader())
                : target.equals(core.self()) ? Status.ok()
                : refusal(target, core.membership(), replication.repairing(target), replication.priority(target));
        if (answerNow != null) {
            out.event(new Ready.TransferDone(done, answerNow));
            return false;
        }
        core.quiescence().leaderBusy(nowMs);
        begin(target, done, nowMs + core.config().electionTimeoutMs());
        maybeSendTimeoutNow();
        return true;
    }

    /** A leader hands leadership to a caught-up voter of higher election priority (see {@link PriorityHandover}). */
    void handOverToPreferred(long nowMs) {
        long commit = core.commitIndex();
        boolean settled = core.log().term(commit) == core.term() && !active() && !core.membershipChanging();
        PeerId to = core.replication().handoverTarget(commit, settled, nowMs);
        if (to != null) {
            tryBegin(to, status -> { }, nowMs);
        }
    }

    /** Once the target holds our whole log, tell it to campaign now. */
    void maybeSendTimeoutNow() {
        Replication replication = core.replication();
        if (core.role() == Role.LEADER && active() && !replication.repairing(target)
                && readyForTimeoutNow(replication.match(target), core.log().lastIndex())) {
            out.send(new Ready.TimeoutNow(target, TimeoutNowRequest.newBuilder().setGroupId(core.config().groupId())
                    .setServerId(core.self().toString()).setPeerId(target.toString()).setTerm(core.term()).build()));
        }
    }

    /** Ends the transfer when its target is known to lead, or when its time is up. */
    void check(long nowMs) {
        check(core.leader(), core.role() == Role.LEADER, nowMs, core.config().electionTimeoutMs());
    }

    /**
     * Why leadership cannot go to {@code target} now, or null if it can: it must be a voting
     * member, not repairing after a storage fault, of election priority above 0, and no other
     * transfer may be under way.
     */
    Status refusal(PeerId target, Membership m, boolean targetRepairing, int targetPriority) {
        if (!m.current().contains(target)) {
            return Status.error(RaftError.INVALID_ARGUMENT, "%s is not a voting member of %s", target, m.current());
        } else if (targetRepairing) {
            return Status.error(RaftError.INVALID_ARGUMENT,
                    "%s is repairing its log after a storage fault and cannot take leadership until repaired", target);
        } else if (m.isWitness(target)) {
            return WitnessRules.transferRefused(target);
        } else if (targetPriority == 0) {
            return Status.error(RaftError.INVALID_ARGUMENT, "%s never leads: %s; choose a member of election priority 1 or more",
                    target, m.isWitness(target) ? "it is a witness" : "its election priority is 0");
        } else if (active()) {
            return Status.error(RaftError.LEADER_TRANSFERRING, "a transfer to %s is already in progress", target());
        }
        return null;
    }

    boolean active() {
        return target != null;
    }

    PeerId target() {
        return target;
    }

    private void begin(PeerId target, Closure done, long deadlineMs) {
        this.target = target;
        this.done = done;
        this.deadlineMs = deadlineMs;
        this.timeoutNowSent = false;
    }

    /** True exactly once: when the target first holds the whole log, so TimeoutNow may go out. */
    private boolean readyForTimeoutNow(long targetMatch, long lastIndex) {
        if (target == null || timeoutNowSent || targetMatch < lastIndex) {
            return false;
        }
        timeoutNowSent = true;
        return true;
    }

    private void check(PeerId knownLeader, boolean stillLeader, long nowMs, int electionTimeoutMs) {
        if (target == null) {
            return;
        }
        if (target.equals(knownLeader) && !stillLeader) {
            finish(Status.ok());
        } else if (nowMs >= deadlineMs) {
            finish(Status.error(RaftError.TIMEOUT, "%s did not take over within %d ms%s", target, electionTimeoutMs,
                    stillLeader ? "; this leader resumes" : ""));
        }
    }

    /** The node stops: the transfer in progress (if any) ends with {@code status}. */
    void cancel(Status status) {
        if (target != null) {
            finish(status);
        }
    }

    private void finish(Status status) {
        Closure caller = done;
        target = null;
        done = null;
        out.event(new Ready.TransferDone(caller, status));
    }
}
