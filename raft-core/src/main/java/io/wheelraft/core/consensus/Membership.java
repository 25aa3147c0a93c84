package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.proto.ConfigurationEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The membership in effect: a configuration, and during joint consensus the one being left.
 * Every quorum question (election won? index committed? leader still heard from?) needs a
 * majority of {@code current} and, while joint, a majority of {@code old} too (Raft §6).
 * Immutable.
 *
 * @param index the log index of the entry that introduced it (0: bootstrap)
 */
public record Membership(Configuration current, Configuration old, long index) {

    public Membership {
        if (old != null && old.isEmpty()) {
            old = null;
        }
    }

    public static Membership of(Configuration conf) {
        return new Membership(conf, null, 0);
    }

    public static Membership fromEntry(ConfigurationEntry e, long index) {
        Configuration cur = Configuration.fromEntry(e.getPeersList(), e.getLearnersList(), e.getWitnessesList(), e.getPrioritiesMap());
        Configuration old = e.getOldPeersCount() == 0 ? null
                : Configuration.fromEntry(e.getOldPeersList(), e.getOldLearnersList(), e.getWitnessesList(), e.getPrioritiesMap());
        return new Membership(cur, old, index);
    }

    public ConfigurationEntry toEntry() {
        return jointEntry(current, old);
    }

    /**
     * The entry for configuration {@code current}, joint with {@code old} when that is not null:
     * one witness list covers both halves (a member is a witness in both or in neither), and the
     * priorities are those of {@code current}: they say where leadership should go next.
     */
    public static ConfigurationEntry jointEntry(Configuration current, Configuration old) {
        if (old == null) {
            return current.toEntry();
        }
        ConfigurationEntry.Builder b = current.toEntry().toBuilder();
        b.addAllOldPeers(old.peerStrings()).addAllOldLearners(old.learnerStrings());
        Set<String> witnesses = new TreeSet<>(current.witnessStrings());
        witnesses.addAll(old.witnessStrings());
        b.clearWitnesses().addAllWitnesses(witnesses);
        return b.build();
    }

    public boolean isJoint() {
        return old != null;
    }

    public boolean isVoter(PeerId p) {
        return current.contains(p) || (old != null && old.contains(p));
    }

    /** Is {@code p} a witness in either configuration? */
    public boolean isWitness(PeerId p) {
        return current.isWitness(p) || (old != null && old.isWitness(p));
    }

    public boolean isLearner(PeerId p) {
        return !isVoter(p) && (current.learners().contains(p) || (old != null && old.learners().contains(p)));
    }

    /** Whether any peer that receives the log matches {@code test}, without collecting them as {@link #allMembers()} does. */
    public boolean anyMember(Predicate<PeerId> test) {
        return anyOf(current, test) || (old != null && anyOf(old, test));
    }

    private static boolean anyOf(Configuration c, Predicate<PeerId> test) {
        for (PeerId p : c.peers()) {
            if (test.test(p)) {
                return true;
            }
        }
        for (PeerId p : c.learners()) {
            if (test.test(p)) {
                return true;
            }
        }
        return false;
    }

    /** Every peer that receives the log: voters of both configurations and learners. */
    public Set<PeerId> allMembers() {
        TreeSet<PeerId> all = new TreeSet<>(current.peers());
        all.addAll(current.learners());
        if (old != null) {
            all.addAll(old.peers());
            all.addAll(old.learners());
        }
        return all;
    }

    public Set<PeerId> voters() {
        TreeSet<PeerId> all = new TreeSet<>(current.peers());
        if (old != null) {
            all.addAll(old.peers());
        }
        return all;
    }

    /** Do the peers accepted by {@code yes} form a majority (of both configurations when joint)? */
    public boolean hasQuorum(Predicate<PeerId> yes) {
        return majority(current, yes) && (old == null || majority(old, yes));
    }

    /**
     * Can the peers not rejected by {@code no} still form a majority? False means the outcome is
     * decided against (e.g. an election lost).
     */
    public boolean quorumStillPossible(Predicate<PeerId> no) {
        return hasQuorum(no.negate());
    }

    private static boolean majority(Configuration conf, Predicate<PeerId> yes) {
        if (conf.isEmpty()) {
            return false;
        }
        int n = 0;
        for (PeerId p : conf.peers()) {
            if (yes.test(p)) {
                n++;
            }
        }
        return n >= conf.quorum();
    }

    /** The highest index held by a majority (of both configurations when joint). */
    public long committedIndex(ToLongFunction<PeerId> matchIndex) {
        long c = quorumIndex(current, matchIndex);
        return old == null ? c : Math.min(c, quorumIndex(old, matchIndex));
    }

    private static long quorumIndex(Configuration conf, ToLongFunction<PeerId> matchIndex) {
        if (conf.isEmpty()) {
            return 0;
        }
        List<Long> matches = new ArrayList<>(conf.peers().size());
        for (PeerId p : conf.peers()) {
            matches.add(matchIndex.applyAsLong(p));
        }
        matches.sort(null);
        // sorted ascending: the value at size - quorum is held by at least `quorum` peers
        return matches.get(matches.size() - conf.quorum());
    }
}
