package io.wheelraft.core.consensus;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.proto.ConfigurationEntry;

import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * The leader's membership change by joint consensus (Raft §6), one at a time:
 * <ol>
 *   <li>CATCHING_UP: new voters are first added as learners (replicated to, never counted) until
 *       their logs reach the commit index, so adding them cannot stall commits;</li>
 *   <li>JOINT: the configuration {@code C_old,new} is appended; decisions need both majorities;</li>
 *   <li>FINAL: once the joint entry commits, {@code C_new} is appended; once that commits the
 *       change is done, and a leader that is not in {@code C_new} steps down.</li>
 * </ol>
 * Learner-only changes skip straight to FINAL. A leader elected while a joint configuration is in
 * effect finishes it (with no caller to tell). Owned by the Raft lane.
 */
final class MembershipChanger {

    /** What the changer needs from the leader. */
    interface Leader {
        /** Appends a configuration entry of the current term; returns its index. */
        long appendConfiguration(ConfigurationEntry entry, long nowMs);

        long match(PeerId peer);

        long commitIndex();

        Membership membership();

        PeerId self();

        void stepDown(long nowMs);

        void changeDone(Closure done, Status status);
    }

    private enum Phase { CATCHING_UP, JOINT, FINAL }

    private final Leader leader;
    private final long catchUpTimeoutMs;
    private Phase phase;
    private Configuration target;
    private Configuration before;
    private Set<PeerId> newVoters = Set.of();
    private Closure handle;
    private long entryIndex;
    private long deadlineMs;

    MembershipChanger(Leader leader, long catchUpTimeoutMs) {
        this.leader = leader;
        this.catchUpTimeoutMs = catchUpTimeoutMs;
    }

    boolean inProgress() {
        return phase != null;
    }

    /** Starts a change to {@code newConf}; {@code handle} is told the outcome. */
    void start(Configuration newConf, Closure handle, long nowMs) {
        Membership m = leader.membership();
        if (phase != null || m.isJoint()) {
            leader.changeDone(handle, Status.error(RaftError.CONFIGURATION_CHANGING, "a membership change is already in progress"));
            return;
        }
        Configuration current = m.current();
        if (newConf.equals(current)) {
            leader.changeDone(handle, Status.ok()); // nothing to change
            return;
        }
        if (newConf.isEmpty()) {
            leader.changeDone(handle, Status.error(RaftError.INVALID_ARGUMENT, "a configuration needs at least one voter"));
            return;
        }
        String roleSwitch = WitnessRules.roleSwitchRefusal(current, newConf);
        if (roleSwitch != null) {
            leader.changeDone(handle, Status.error(RaftError.INVALID_ARGUMENT, "%s", roleSwitch));
            return;
        }
        this.handle = handle;
        this.target = newConf;
        this.before = current;
        Set<PeerId> added = new TreeSet<>(newConf.peers());
        added.removeAll(current.peers());
        this.newVoters = added;
        if (!added.isEmpty()) {
            Set<PeerId> learners = new TreeSet<>(current.learners());
            learners.addAll(added);
            // staged learners carry their witness mark and priority already, so a witness
            // catching up is sent entry headers only
            Configuration staging = newConf.withMembers(current.peers(), learners);
            phase = Phase.CATCHING_UP;
            deadlineMs = nowMs + catchUpTimeoutMs;
            entryIndex = staging.equals(current) ? 0 : leader.appendConfiguration(staging.toEntry(), nowMs);
        } else if (newConf.peers().equals(current.peers())) {
            enterFinal(nowMs); // learners only: no joint phase needed
        } else {
            enterJoint(nowMs);
        }
    }

    /** A leader that inherits a joint configuration finishes the change. */
    void resumeJoint(Membership joint, long nowMs) {
        handle = null;
        before = joint.old();
        target = joint.current();
        newVoters = Set.of();
        phase = Phase.JOINT;
        entryIndex = joint.index();
        advance(nowMs);
    }

    /** Re-examines progress; called when matches or the commit index move, and on heartbeats. */
    void advance(long nowMs) {
        if (phase == null) {
            return;
        }
        long commit = leader.commitIndex();
        switch (phase) {
            case CATCHING_UP -> {
                boolean caughtUp = commit >= entryIndex && newVoters.stream().allMatch(p -> leader.match(p) >= commit);
                if (caughtUp) {
                    enterJoint(nowMs);
                } else if (nowMs >= deadlineMs) {
                    Set<PeerId> lagging = new HashSet<>();
                    newVoters.stream().filter(p -> leader.match(p) < commit).forEach(lagging::add);
                    leader.appendConfiguration(before.toEntry(), nowMs); // drop the staged learners again
                    finish(Status.error(RaftError.TIMEOUT, "new peer(s) %s did not catch up within %d ms", lagging, catchUpTimeoutMs));
                }
            }
            case JOINT -> {
                if (commit >= entryIndex) {
                    enterFinal(nowMs);
                }
            }
            case FINAL -> {
                if (commit >= entryIndex) {
                    boolean removedSelf = !target.contains(leader.self());
                    finish(Status.ok());
                    if (removedSelf) {
                        leader.stepDown(nowMs);
                    }
                }
            }
        }
    }

    private void enterJoint(long nowMs) {
        ConfigurationEntry joint = Membership.jointEntry(target, withoutVoters(before, target));
        phase = Phase.JOINT;
        entryIndex = leader.appendConfiguration(joint, nowMs);
    }

    private static Configuration withoutVoters(Configuration conf, Configuration target) {
        Set<PeerId> learners = new TreeSet<>(conf.learners());
        learners.removeAll(target.peers());
        return conf.withMembers(conf.peers(), learners);
    }

    private void enterFinal(long nowMs) {
        phase = Phase.FINAL;
        entryIndex = leader.appendConfiguration(target.toEntry(), nowMs);
    }

    /** Leadership was lost: the change may still finish under the next leader, or not. */
    void abandon() {
        if (phase != null) {
            finish(Status.error(RaftError.LEADERSHIP_LOST, "leadership lost during the membership change; it may or may not complete"));
        }
    }

    private void finish(Status status) {
        Closure h = handle;
        phase = null;
        handle = null;
        target = null;
        before = null;
        newVoters = Set.of();
        if (h != null) {
            leader.changeDone(h, status);
        }
    }
}
