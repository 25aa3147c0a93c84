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

    /**
     * @throws IllegalArgumentException if {@code witness} is already a member (a data replica
     *                                  cannot turn into a witness: remove it first)
     */
    static Configuration withWitness(Configuration current, PeerId witness) {
        if (current.containsAnywhere(witness) && !current.isWitness(witness)) {
            throw new IllegalArgumentException(witness + " is already a member holding data; remove it first to add it as a witness");
        }
        Set<PeerId> peers = new TreeSet<>(current.peers());
        peers.add(witness);
        Set<PeerId> learners = new TreeSet<>(current.learners());
        learners.remove(witness);
        return current.withMembers(peers, learners).withWitness(witness);
    }

    /**
     * @throws IllegalArgumentException if {@code peer} is not a member or {@code priority} is negative
     */
    static Configuration withPriority(Configuration current, PeerId peer, int priority) {
        if (!current.containsAnywhere(peer)) {
            throw new IllegalArgumentException(peer + " is not a member of the configuration " + current);
        }
        if (priority < 0) {
            throw new IllegalArgumentException("priority " + priority + " must be 0 (never leads) or more");
        }
        return current.withPriority(peer, priority);
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
