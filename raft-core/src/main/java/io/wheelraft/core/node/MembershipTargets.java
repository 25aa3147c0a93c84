package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;

import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/** The configurations the {@code Node} membership calls ask for, computed from the one in effect. Pure functions. */
final class MembershipTargets {

    private MembershipTargets() {
    }

    /** {@code peer} becomes a voter (leaving the learners if it was one). */
    static Configuration withVoter(Configuration current, PeerId peer) {
        Set<PeerId> peers = new TreeSet<>(current.peers());
        peers.add(peer);
        Set<PeerId> learners = new TreeSet<>(current.learners());
        learners.remove(peer);
        return current.withMembers(peers, learners);
    }

    static Configuration withoutVoter(Configuration current, PeerId peer) {
        Set<PeerId> peers = new TreeSet<>(current.peers());
        peers.remove(peer);
        return current.withMembers(peers, current.learners());
    }

    /**
     * @throws IllegalArgumentException if one of them is a voter (remove it first)
     */
    static Configuration withLearners(Configuration current, Collection<PeerId> added) {
        Set<PeerId> learners = new TreeSet<>(current.learners());
        for (PeerId p : added) {
            if (current.peers().contains(p)) {
                throw new IllegalArgumentException(p + " is a voter; remove it first to make it a learner");
            }
            learners.add(p);
        }
        return current.withMembers(current.peers(), learners);
    }

    static Configuration withoutLearners(Configuration current, Collection<PeerId> removed) {
        Set<PeerId> learners = new TreeSet<>(current.learners());
        learners.removeAll(removed);
        return current.withMembers(current.peers(), learners);
    }
}
