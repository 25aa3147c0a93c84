package io.wheelraft.core.consensus;

import io.wheelraft.core.Closure;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Status;
import io.wheelraft.proto.ConfigurationEntry;

/**
 * The {@link MembershipChanger}'s view of the leader it runs in: appends configuration entries,
 * reads follower progress and the commit point, steps the leader down when it is removed.
 * Called only from the leader's {@link RaftCore}, on its lane.
 */
final class ChangerView implements MembershipChanger.Leader {

    private final RaftCore core;

    ChangerView(RaftCore core) {
        this.core = core;
    }

    @Override
    public long appendConfiguration(ConfigurationEntry entry, long nowMs) {
        return core.appendConfiguration(entry, nowMs);
    }

    @Override
    public long match(PeerId peer) {
        return core.followerMatch(peer);
    }

    @Override
    public long commitIndex() {
        return core.commitIndex();
    }

    @Override
    public Membership membership() {
        return core.membership();
    }

    @Override
    public PeerId self() {
        return core.self();
    }

    @Override
    public void stepDown(long nowMs) {
        core.stepDownAsRemoved(nowMs);
    }

    @Override
    public void changeDone(Closure done, Status status) {
        core.out().event(new Ready.MembershipChangeDone(done, status));
    }
}
