package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Quorum arithmetic of plain and joint memberships (Raft §6), learners included. */
class MembershipTest {

    private static final PeerId N1 = peer(1), N2 = peer(2), N3 = peer(3), N4 = peer(4), N5 = peer(5), N6 = peer(6);

    private static Membership plain(PeerId... voters) {
        return Membership.of(new Configuration(List.of(voters)));
    }

    private static Membership joint(List<PeerId> oldVoters, List<PeerId> newVoters) {
        return new Membership(new Configuration(newVoters), new Configuration(oldVoters), 7);
    }

    @Test
    void plainQuorumIsAStrictMajority() {
        Membership three = plain(N1, N2, N3);
        assertTrue(three.hasQuorum(Set.of(N1, N2)::contains));
        assertFalse(three.hasQuorum(Set.of(N1)::contains));
        Membership four = plain(N1, N2, N3, N4);
        assertFalse(four.hasQuorum(Set.of(N1, N2)::contains), "half of four is no majority");
        assertTrue(four.hasQuorum(Set.of(N1, N2, N4)::contains));
    }

    @Test
    void jointQuorumNeedsAMajorityOfBothConfigurations() {
        // {1,2,3} -> {3,4,5}
        Membership m = joint(List.of(N1, N2, N3), List.of(N3, N4, N5));
        assertTrue(m.isJoint());
        assertFalse(m.hasQuorum(Set.of(N1, N2, N3)::contains), "all of the old, one of the new");
        assertFalse(m.hasQuorum(Set.of(N3, N4, N5)::contains), "all of the new, one of the old");
        assertTrue(m.hasQuorum(Set.of(N2, N3, N4)::contains), "two of each");
        assertTrue(m.quorumStillPossible(Set.of(N1, N5)::contains));
        assertFalse(m.quorumStillPossible(Set.of(N1, N2)::contains), "the old majority is gone");
        assertEquals(Set.of(N1, N2, N3, N4, N5), m.voters());
    }

    @Test
    void committedIndexIsTheHighestIndexHeldByAMajority() {
        Map<PeerId, Long> match = Map.of(N1, 9L, N2, 7L, N3, 5L, N4, 3L, N5, 1L, N6, 0L);
        assertEquals(5, plain(N1, N2, N3, N4, N5).committedIndex(match::get), "odd: third highest of five");
        assertEquals(7, plain(N1, N2, N3).committedIndex(match::get));
        assertEquals(5, plain(N1, N2, N3, N4).committedIndex(match::get), "even: needs three of four");
        assertEquals(3, plain(N1, N2, N3, N4, N5, N6).committedIndex(match::get), "even: needs four of six");
        assertEquals(9, plain(N1).committedIndex(match::get));
    }

    @Test
    void jointCommittedIndexIsTheLowerOfBothMajorities() {
        Map<PeerId, Long> match = Map.of(N1, 9L, N2, 8L, N3, 7L, N4, 2L, N5, 1L);
        Membership m = joint(List.of(N1, N2, N3), List.of(N3, N4, N5));
        assertEquals(2, m.committedIndex(match::get), "old majority holds 8, new majority only 2");
        Membership reverse = joint(List.of(N3, N4, N5), List.of(N1, N2, N3));
        assertEquals(2, reverse.committedIndex(match::get));
    }

    @Test
    void learnersAreNeverCounted() {
        Membership m = new Membership(new Configuration(List.of(N1, N2, N3), List.of(N4, N5)), null, 0);
        assertFalse(m.hasQuorum(Set.of(N1, N4, N5)::contains), "two learners and one voter are no quorum");
        assertTrue(m.hasQuorum(Set.of(N1, N2)::contains));
        Map<PeerId, Long> match = Map.of(N1, 1L, N2, 1L, N3, 1L, N4, 50L, N5, 50L);
        assertEquals(1, m.committedIndex(match::get), "learners far ahead must not move the commit index");
        assertTrue(m.isLearner(N4));
        assertFalse(m.isVoter(N4));
        assertEquals(Set.of(N1, N2, N3), m.voters());
        assertEquals(Set.of(N1, N2, N3, N4, N5), m.allMembers(), "learners still receive the log");
    }

    @Test
    void roundTripsThroughItsLogEntry() {
        Membership m = joint(List.of(N1, N2, N3), List.of(N3, N4, N5));
        assertEquals(m, Membership.fromEntry(m.toEntry(), 7));
        Membership p = plain(peers(3).toArray(new PeerId[0]));
        assertFalse(Membership.fromEntry(p.toEntry(), 3).isJoint());
    }
}
