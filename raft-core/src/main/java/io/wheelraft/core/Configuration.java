package io.wheelraft.core;

import io.wheelraft.proto.ConfigurationEntry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A group membership: the voting peers and the learners (replicated to, never counted).
 * Immutable; parsed from and written as a comma-separated list, learners suffixed with
 * {@code /learner}.
 */
public final class Configuration {

    private static final String LEARNER_SUFFIX = "/learner";

    private final Set<PeerId> peers;
    private final Set<PeerId> learners;

    public Configuration(Collection<PeerId> peers) {
        this(peers, List.of());
    }

    public Configuration(Collection<PeerId> peers, Collection<PeerId> learners) {
        TreeSet<PeerId> p = new TreeSet<>(peers);
        TreeSet<PeerId> l = new TreeSet<>(learners);
        for (PeerId learner : l) {
            if (p.contains(learner)) {
                throw new IllegalArgumentException("peer " + learner + " cannot be both a voter and a learner");
            }
        }
        this.peers = Collections.unmodifiableSet(p);
        this.learners = Collections.unmodifiableSet(l);
    }

    public static Configuration empty() {
        return new Configuration(List.of());
    }

    /**
     * Parses {@code "h1:p1,h2:p2,h3:p3/learner"}.
     *
     * @throws IllegalArgumentException naming the entry that is malformed or repeated
     */
    public static Configuration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("peer list is empty");
        }
        List<PeerId> peers = new ArrayList<>();
        List<PeerId> learners = new ArrayList<>();
        for (String raw : text.split(",")) {
            String item = raw.trim();
            if (item.isEmpty()) {
                throw new IllegalArgumentException("peer list '" + text + "' has an empty entry");
            }
            boolean learner = item.endsWith(LEARNER_SUFFIX);
            PeerId id = PeerId.parse(learner ? item.substring(0, item.length() - LEARNER_SUFFIX.length()) : item);
            if (peers.contains(id) || learners.contains(id)) {
                throw new IllegalArgumentException("peer list '" + text + "' names " + id + " twice");
            }
            (learner ? learners : peers).add(id);
        }
        return new Configuration(peers, learners);
    }

    public static Configuration fromEntry(List<String> peers, List<String> learners) {
        return new Configuration(peers.stream().map(PeerId::parse).toList(), learners.stream().map(PeerId::parse).toList());
    }

    /** Voting members, sorted. */
    public Set<PeerId> peers() {
        return peers;
    }

    /** Learners, sorted. */
    public Set<PeerId> learners() {
        return learners;
    }

    public boolean isEmpty() {
        return peers.isEmpty();
    }

    public boolean contains(PeerId peer) {
        return peers.contains(peer);
    }

    public boolean containsAnywhere(PeerId peer) {
        return peers.contains(peer) || learners.contains(peer);
    }

    /** Votes needed to win in this configuration alone. */
    public int quorum() {
        return peers.size() / 2 + 1;
    }

    public List<String> peerStrings() {
        return peers.stream().map(PeerId::toString).toList();
    }

    public List<String> learnerStrings() {
        return learners.stream().map(PeerId::toString).toList();
    }

    /** This configuration as a plain (non-joint) configuration entry. */
    public ConfigurationEntry toEntry() {
        return ConfigurationEntry.newBuilder().addAllPeers(peerStrings()).addAllLearners(learnerStrings()).build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Configuration c && peers.equals(c.peers) && learners.equals(c.learners);
    }

    @Override
    public int hashCode() {
        return peers.hashCode() * 31 + learners.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (PeerId p : peers) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(p);
        }
        for (PeerId l : learners) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(l).append(LEARNER_SUFFIX);
        }
        return sb.toString();
    }
}
