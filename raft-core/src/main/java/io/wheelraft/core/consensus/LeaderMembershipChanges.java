package io.wheelraft.core.consensus;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;

/**
 * The membership changes a {@link RaftCore} leads: the running joint-consensus change
 * ({@link MembershipChanger}, rebuilt each time this node becomes leader) and a change asked for
 * before this leader committed an entry of its own term, held until it has. It exists apart from
 * the core so that the core keeps term, role and log while when a change starts, advances and
 * ends sits in one place; every caller ends through {@link Ready.MembershipChangeDone}. Not
 * thread-safe: owned by the core, on the node's Raft lane.
 */
final class LeaderMembershipChanges {

    private final RaftCore core;
    private MembershipChanger changer;

    private record HeldChange(Configuration target, Closure done) {
    }

    private HeldChange changeAwaitingTermCommit;

    LeaderMembershipChanges(RaftCore core) {
        this.core = core;
    }

    /** This node became leader: changes run on a new changer, on top of the log as it is. */
    void leaderStarted() {
        changer = new MembershipChanger(new ChangerView(core), 10L * core.config().electionTimeoutMs());
    }

    /** A new leader found a joint configuration in its log: carry that change on to its end. */
    void resumeJointIfAny(long nowMs) {
        if (core.membership().isJoint()) {
            changer.resumeJoint(core.membership(), nowMs);
        }
    }

    /**
     * Changes the voting members and learners to {@code target} by joint consensus; the outcome
     * goes to {@code done} through {@link Ready.MembershipChangeDone}.
     */
    void change(Configuration target, Closure done, long nowMs) {
        if (core.role() == Role.LEADER) {
            core.quiescence().leaderBusy(nowMs);
        }
        if (core.role() != Role.LEADER) {
            core.out().event(new Ready.MembershipChangeDone(done, Status.notLeader(core.leader())));
        } else if (core.log().term(core.commitIndex()) != core.term()) {
            // A new leader may not change membership before it commits in its own term (a change
            // built on an uncommitted configuration could overlap another leader's). Hold it.
            if (changeAwaitingTermCommit != null || changer.inProgress()) {
                core.out().event(new Ready.MembershipChangeDone(done, Status.error(RaftError.CONFIGURATION_CHANGING,
                        "a membership change is already in progress")));
            } else {
                changeAwaitingTermCommit = new HeldChange(target, done);
            }
        } else {
            changer.start(target, done, nowMs);
        }
    }

    /** The leader's heartbeat: the running change moves on (and its catch-up deadline is enforced). */
    void advance(long nowMs) {
        changer.advance(nowMs);
    }

    /** A follower acknowledged entries or a snapshot: a running change may move on. */
    void advanceIfLeaderChanging(long nowMs) {
        if (core.role() == Role.LEADER && changer.inProgress()) {
            changer.advance(nowMs);
        }
    }

    /** The commit point moved: a running change may move on, and a held one starts now that this leader committed in its term. */
    void onCommitAdvanced(long nowMs) {
        if (changer != null && changer.inProgress()) {
            changer.advance(nowMs);
        }
        if (core.role() == Role.LEADER && changeAwaitingTermCommit != null) {
            HeldChange held = changeAwaitingTermCommit;
            changeAwaitingTermCommit = null;
            changer.start(held.target(), held.done(), nowMs);
        }
    }

    /** This node is no longer leader: the running change is abandoned, a held one fails with a hint to {@code newLeader}. */
    void leadershipLost(PeerId newLeader) {
        if (changer != null) {
            MembershipChanger c = changer;
            changer = null;
            c.abandon();
        }
        if (changeAwaitingTermCommit != null) {
            Closure h = changeAwaitingTermCommit.done();
            changeAwaitingTermCommit = null;
            core.out().event(new Ready.MembershipChangeDone(h, Status.notLeader(newLeader)));
        }
    }

    /** The node stops: the running change is abandoned, a held one ends with {@code reason}. */
    void stop(Status reason) {
        if (changer != null) {
            changer.abandon();
        }
        if (changeAwaitingTermCommit != null) {
            Closure h = changeAwaitingTermCommit.done();
            changeAwaitingTermCommit = null;
            core.out().event(new Ready.MembershipChangeDone(h, reason));
        }
    }

    /** A membership change is running or waits for this leader's first commit. */
    boolean changing() {
        return changer.inProgress() || changeAwaitingTermCommit != null;
    }
}
