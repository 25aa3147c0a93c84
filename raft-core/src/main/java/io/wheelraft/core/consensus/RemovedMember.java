package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node that was removed from its group from campaigning forever (the disruptive removed
 * server of thesis §4.2.3). A removed follower usually never receives the configuration that
 * removes it: the leader stops replicating to it as soon as that entry is appended. So it would
 * keep timing out and starting pre-votes that can never win. Instead, a voter whose latest
 * configuration is committed and lists the candidate nowhere (neither voter nor learner) says
 * so in its pre-vote refusal, and the candidate stops starting pre-votes, saying so once, until
 * a leader contacts it again (it was added back) or its own log gains a newer configuration.
 *
 * <p>Only liveness rides on this: a removed node cannot win anyway, and a member that wrongly
 * stopped would still vote, replicate and campaign again on the first leader contact. A claim
 * is believed only if it is about a configuration at least as new as the candidate's own
 * latest one, so a lagging voter cannot silence a node that was added back.
 *
 * <p>Not thread-safe: owned by {@link RaftCore}, on the node's lane.
 */
final class RemovedMember {

    private static final Logger LOG = LoggerFactory.getLogger(RemovedMember.class);

    private final PeerId self;
    /** Index of the committed configuration that does not list us; 0 while we are not told so. */
    private long removedAtIndex;
    /** The configuration index we last said leaves us out (-1: none), so each is said once. */
    private long saidNotListedAt = -1;

    RemovedMember(PeerId self) {
        this.self = self;
    }

    /**
     * Whether this node may start a pre-vote: it is a voter of its latest configuration and no
     * voter told it that it was removed. Says once when its own latest configuration (appended,
     * committed or not) leaves it out.
     */
    boolean mayCampaign(Membership ours) {
        if (!ours.isVoter(self)) {
            long index = ours.index();
            if (!ours.current().isEmpty() && !ours.isLearner(self) && saidNotListedAt != index) {
                saidNotListedAt = index;
                LOG.warn("{} is not in its group's latest configuration (index {}): it does not campaign; add it back with "
                        + "add-peer, or stop it", self, index);
            }
            return false;
        }
        return removedAtIndex == 0;
    }

    /**
     * Voter side: the index of our committed configuration if it does not list {@code candidate},
     * to send back with the refusal; 0 if it lists it, or if a configuration change is under way
     * (the newest configuration is not committed yet) and so the answer could still change.
     */
    static long removedAt(PeerId candidate, Membership latest, long commitIndex) {
        if (latest.isJoint() || latest.index() > commitIndex || latest.current().isEmpty()) {
            return 0;
        }
        return latest.allMembers().contains(candidate) ? 0 : Math.max(1, latest.index());
    }

    /**
     * Candidate side: {@code voter} answered that its configuration committed at {@code index}
     * does not list us.
     *
     * @return true if believed (the pre-vote round ends without a retry)
     */
    boolean toldRemoved(PeerId voter, long index, Membership ours) {
        if (index <= 0 || index < ours.index()) {
            return false;
        }
        if (removedAtIndex == 0) {
            LOG.warn("{} is no longer a member of its group: {} committed a configuration (index {}) without it. It stops "
                    + "campaigning; add it back with add-peer, or stop it", self, voter, index);
        }
        removedAtIndex = Math.max(removedAtIndex, index);
        return true;
    }

    /** A leader of the group contacted us: whatever we were told, we are part of it again. */
    void leaderContact() {
        if (removedAtIndex != 0) {
            LOG.info("{} hears from a leader again; it campaigns again when it loses its leader", self);
            removedAtIndex = 0;
        }
    }
}
