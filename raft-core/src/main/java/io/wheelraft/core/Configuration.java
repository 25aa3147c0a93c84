package io.wheelraft.core;

import io.wheelraft.proto.ConfigurationEntry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A group membership: the voting peers, the learners (replicated to, never counted), which of
 * those members are witnesses (vote and acknowledge, hold no data, never lead), and the election
 * priorities set explicitly for members. Immutable.
 *
 * <p>Written and parsed as a comma-separated list of {@code HOST:PORT[:INDEX]} items, each with
 * optional suffixes: {@code /learner}, {@code /witness}, {@code /priority=N}; for example
 * {@code "h1:1,h2:2/priority=5,h3:3/witness"}.
 */
public final class Configuration {

    private static final String LEARNER_SUFFIX = "learner";
    private static final String WITNESS_SUFFIX = "witness";
    private static final String PRIORITY_PREFIX = "priority=";

    private final Set<PeerId> peers;
    private final Set<PeerId> learners;
    private final Set<PeerId> witnesses;
    private final Map<PeerId, Integer> priorities;
    /**
     * {@link #toEntry()}, made on first use: a configuration is immutable, and the groups of a
     * process that share one (their initial members) then share its entry too instead of each
     * building the same protobuf when it starts.
     */
    private volatile ConfigurationEntry entry;

    public Configuration(Collection<PeerId> peers) {
        this(peers, List.of());
    }

    public Configuration(Collection<PeerId> peers, Collection<PeerId> learners) {
        this(peers, learners, List.of(), Map.of());
    }

    /**
     * @param witnesses  members (voters or learners) that run as witnesses
     * @param priorities explicit election priorities of members; members not named have none
     * @throws IllegalArgumentException naming the peer that is both a voter and a learner, a witness
     *                                  or priority for a non-member, or a negative priority
     */
    public Configuration(Collection<PeerId> peers, Collection<PeerId> learners,
                         Collection<PeerId> witnesses, Map<PeerId, Integer> priorities) {
        TreeSet<PeerId> p = new TreeSet<>(peers);
        TreeSet<PeerId> l = new TreeSet<>(learners);
        for (PeerId learner : l) {
            if (p.contains(learner)) {
                throw new IllegalArgumentException("peer " + learner + " cannot be both a voter and a learner");
            }
        }
        TreeSet<PeerId> w = new TreeSet<>(witnesses);
        for (PeerId witness : w) {
            if (!p.contains(witness) && !l.contains(witness)) {
                throw new IllegalArgumentException("witness " + witness + " is not a member of the configuration; list it among the peers too");
            }
        }
        TreeMap<PeerId, Integer> pr = new TreeMap<>(priorities);
        pr.forEach((peer, priority) -> {
            if (!p.contains(peer) && !l.contains(peer)) {
                throw new IllegalArgumentException("priority given for " + peer + ", which is not a member of the configuration");
            }
            if (priority == null || priority < 0) {
                throw new IllegalArgumentException("priority " + priority + " of " + peer + " must be 0 (never leads) or more");
            }
        });
        // Equal member sets are shared across configurations, and most configurations have no
        // learners, witnesses or priorities (a process hosting thousands of groups keeps a few
        // configurations per group, mostly of the same peers).
        this.peers = SharedPeerSets.of(p);
        this.learners = SharedPeerSets.of(l);
        this.witnesses = SharedPeerSets.of(w);
        this.priorities = pr.isEmpty() ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(pr);
    }

    public static Configuration empty() {
        return new Configuration(List.of());
    }

    /**
     * Parses {@code "h1:p1,h2:p2/priority=3,h3:p3/witness,h4:p4/learner"}.
     *
     * @throws IllegalArgumentException naming the entry that is malformed or repeated
     */
    public static Configuration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("peer list is empty");
        }
        List<PeerId> peers = new ArrayList<>();
        List<PeerId> learners = new ArrayList<>();
        List<PeerId> witnesses = new ArrayList<>();
        Map<PeerId, Integer> priorities = new TreeMap<>();
        for (String raw : text.split(",")) {
            String item = raw.trim();
            if (item.isEmpty()) {
                throw new IllegalArgumentException("peer list '" + text + "' has an empty entry");
            }
            String[] parts = item.split("/", -1);
            PeerId id = PeerId.parse(parts[0]);
            if (peers.contains(id) || learners.contains(id)) {
                throw new IllegalArgumentException("peer list '" + text + "' names " + id + " twice");
            }
            boolean learner = false;
            for (int i = 1; i < parts.length; i++) {
                String suffix = parts[i].trim();
                if (suffix.equals(LEARNER_SUFFIX)) {
                    learner = true;
                } else if (suffix.equals(WITNESS_SUFFIX)) {
                    witnesses.add(id);
                } else if (suffix.startsWith(PRIORITY_PREFIX)) {
                    priorities.put(id, parsePriority(suffix.substring(PRIORITY_PREFIX.length()), item));
                } else {
                    throw new IllegalArgumentException("peer list entry '" + item + "' has an unknown suffix '/" + suffix
                            + "'; use /learner, /witness or /priority=N");
                }
            }
            (learner ? learners : peers).add(id);
        }
        return new Configuration(peers, learners, witnesses, priorities);
    }

    private static int parsePriority(String value, String item) {
        try {
            int p = Integer.parseInt(value.trim());
            if (p < 0) {
                throw new IllegalArgumentException("peer list entry '" + item + "' has a negative priority; use 0 (never leads) or more");
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("peer list entry '" + item + "' has a priority '" + value + "' that is not a number", e);
        }
    }

    /** The configuration stored in one half of a configuration entry. */
    public static Configuration fromEntry(List<String> peers, List<String> learners,
                                          List<String> witnesses, Map<String, Integer> priorities) {
        Set<PeerId> p = new TreeSet<>(peers.stream().map(PeerId::parse).toList());
        Set<PeerId> l = new TreeSet<>(learners.stream().map(PeerId::parse).toList());
        // the entry keeps one witness list and one priority map for both halves of a joint
        // configuration: each half takes what concerns its own members
        List<PeerId> w = witnesses.stream().map(PeerId::parse).filter(x -> p.contains(x) || l.contains(x)).toList();
        Map<PeerId, Integer> pr = new TreeMap<>();
        priorities.forEach((peer, priority) -> {
            PeerId id = PeerId.parse(peer);
            if (p.contains(id) || l.contains(id)) {
                pr.put(id, priority);
            }
        });
        return new Configuration(p, l, w, pr);
    }

    public static Configuration fromEntry(List<String> peers, List<String> learners) {
        return fromEntry(peers, learners, List.of(), Map.of());
    }

    /** Voting members (witnesses included), sorted. */
    public Set<PeerId> peers() {
        return peers;
    }

    /** Learners, sorted. */
    public Set<PeerId> learners() {
        return learners;
    }

    /** Members that run as witnesses, sorted. */
    public Set<PeerId> witnesses() {
        return witnesses;
    }

    public boolean isWitness(PeerId peer) {
        return witnesses.contains(peer);
    }

    /** Election priorities set explicitly for members, by peer. */
    public Map<PeerId, Integer> priorities() {
        return priorities;
    }

    /** The explicit priority of {@code peer}, if the configuration sets one. */
    public OptionalInt priority(PeerId peer) {
        Integer p = priorities.get(peer);
        return p == null ? OptionalInt.empty() : OptionalInt.of(p);
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

    /**
     * This configuration with other voters and learners; the witness marks and priorities of
     * members that stay are kept, those of members that leave are dropped.
     */
    public Configuration withMembers(Collection<PeerId> newPeers, Collection<PeerId> newLearners) {
        Set<PeerId> all = new TreeSet<>(newPeers);
        all.addAll(newLearners);
        List<PeerId> w = witnesses.stream().filter(all::contains).toList();
        Map<PeerId, Integer> pr = new TreeMap<>();
        priorities.forEach((peer, priority) -> {
            if (all.contains(peer)) {
                pr.put(peer, priority);
            }
        });
        return new Configuration(newPeers, newLearners, w, pr);
    }

    /** This configuration with {@code peer} marked as a witness (it must already be a member). */
    public Configuration withWitness(PeerId peer) {
        Set<PeerId> w = new TreeSet<>(witnesses);
        w.add(peer);
        return new Configuration(peers, learners, w, priorities);
    }

    /** This configuration with the explicit priority of member {@code peer} set to {@code priority}. */
    public Configuration withPriority(PeerId peer, int priority) {
        Map<PeerId, Integer> pr = new TreeMap<>(priorities);
        pr.put(peer, priority);
        return new Configuration(peers, learners, witnesses, pr);
    }

    public List<String> peerStrings() {
        return peers.stream().map(PeerId::toString).toList();
    }

    public List<String> learnerStrings() {
        return learners.stream().map(PeerId::toString).toList();
    }

    public List<String> witnessStrings() {
        return witnesses.stream().map(PeerId::toString).toList();
    }

    /** The explicit priorities keyed by peer text, as a configuration entry stores them. */
    public Map<String, Integer> priorityStrings() {
        Map<String, Integer> m = new TreeMap<>();
        priorities.forEach((peer, priority) -> m.put(peer.toString(), priority));
        return m;
    }

    /** This configuration as a plain (non-joint) configuration entry. */
    public ConfigurationEntry toEntry() {
        ConfigurationEntry e = entry;
        if (e == null) {
            e = ConfigurationEntry.newBuilder().addAllPeers(peerStrings()).addAllLearners(learnerStrings())
                    .addAllWitnesses(witnessStrings()).putAllPriorities(priorityStrings()).build();
            entry = e; // a race builds an equal entry twice: harmless
        }
        return e;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Configuration c && peers.equals(c.peers) && learners.equals(c.learners)
                && witnesses.equals(c.witnesses) && priorities.equals(c.priorities);
    }

    @Override
    public int hashCode() {
        return ((peers.hashCode() * 31 + learners.hashCode()) * 31 + witnesses.hashCode()) * 31 + priorities.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (PeerId p : peers) {
            append(sb, p, false);
        }
        for (PeerId l : learners) {
            append(sb, l, true);
        }
        return sb.toString();
    }

    private void append(StringBuilder sb, PeerId p, boolean learner) {
        if (sb.length() > 0) {
            sb.append(',');
        }
        sb.append(p);
        if (learner) {
            sb.append('/').append(LEARNER_SUFFIX);
        }
        if (witnesses.contains(p)) {
            sb.append('/').append(WITNESS_SUFFIX);
        }
        Integer priority = priorities.get(p);
        if (priority != null) {
            sb.append('/').append(PRIORITY_PREFIX).append(priority);
        }
    }
}
