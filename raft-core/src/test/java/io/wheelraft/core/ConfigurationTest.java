package io.wheelraft.core;

import io.wheelraft.core.consensus.Membership;
import io.wheelraft.proto.ConfigurationEntry;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigurationTest {

    private static final PeerId A = PeerId.parse("h:1");
    private static final PeerId B = PeerId.parse("h:2");
    private static final PeerId W = PeerId.parse("h:3");

    @Test
    void parsesWitnessAndPriorityMarksAndWritesThemBack() {
        Configuration c = Configuration.parse("h:1/priority=5, h:2, h:3/witness, h:4/learner");
        assertEquals(3, c.peers().size());
        assertTrue(c.isWitness(W));
        assertFalse(c.isWitness(A));
        assertEquals(OptionalInt.of(5), c.priority(A));
        assertEquals(OptionalInt.empty(), c.priority(B));
        assertEquals(2, c.quorum(), "a witness is a voter and counts towards the quorum");
        assertEquals(c, Configuration.parse(c.toString()));
    }

    @Test
    void refusesMarksItCannotHonour() {
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> Configuration.parse("h:1/leader"));
        assertTrue(unknown.getMessage().contains("/leader"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Configuration.parse("h:1/priority=-1"));
        assertThrows(IllegalArgumentException.class, () -> Configuration.parse("h:1/priority=x"));
        IllegalArgumentException stranger = assertThrows(IllegalArgumentException.class,
                () -> new Configuration(List.of(A), List.of(), List.of(W), Map.of()));
        assertTrue(stranger.getMessage().contains("h:3"), stranger.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Configuration(List.of(A), List.of(), List.of(), Map.of(B, 1)));
    }

    @Test
    void entryRoundTripKeepsWitnessesAndPriorities() {
        Configuration c = new Configuration(List.of(A, B, W), List.of(), List.of(W), Map.of(A, 7, W, 0));
        assertEquals(c, Membership.fromEntry(c.toEntry(), 4).current());
    }

    @Test
    void theEntryIsBuiltOnceAndAJointEntryWithoutOldMembersIsTheCurrentOnesEntry() {
        Configuration c = new Configuration(List.of(A, B, W), List.of(), List.of(W), Map.of(A, 7));
        assertSame(c.toEntry(), c.toEntry(), "one instance for every holder of this configuration");
        assertEquals(io.wheelraft.proto.ConfigurationEntry.newBuilder().addAllPeers(List.of("h:1", "h:2", "h:3"))
                .addWitnesses("h:3").putPriorities("h:1", 7).build(), c.toEntry());
        assertSame(c.toEntry(), Membership.jointEntry(c, null));
        Configuration old = new Configuration(List.of(A, B));
        assertEquals(List.of("h:1", "h:2"), Membership.jointEntry(c, old).getOldPeersList());
        assertEquals(0, c.toEntry().getOldPeersCount(), "the joint entry is built apart: the shared one is unchanged");
    }

    @Test
    void changingMembersKeepsTheMarksOfThoseWhoStay() {
        Configuration c = new Configuration(List.of(A, B, W), List.of(), List.of(W), Map.of(A, 7, B, 2));
        Configuration changed = c.withMembers(List.of(A, W), List.of());
        assertTrue(changed.isWitness(W));
        assertEquals(Map.of(A, 7), changed.priorities(), "the priority of the member that left is dropped");
        assertEquals(OptionalInt.of(3), changed.withPriority(W, 3).priority(W));
    }

    @Test
    void jointEntryCarriesTheMarksOfBothHalves() {
        Configuration old = new Configuration(List.of(A, B, W), List.of(), List.of(W), Map.of(B, 4));
        Configuration target = new Configuration(List.of(A, B), List.of(), List.of(), Map.of(A, 9));
        ConfigurationEntry e = Membership.jointEntry(target, old);
        Membership m = Membership.fromEntry(e, 10);
        assertEquals(target, m.current());
        assertTrue(m.old().isWitness(W));
        assertTrue(m.isWitness(W));
        assertEquals(OptionalInt.empty(), m.old().priority(B), "priorities are the target's");
    }

    @Test
    void configurationsOfTheSameMembersShareOneMemberSet() {
        Configuration a = Configuration.parse("h1:1,h2:2,h3:3");
        Configuration b = new Configuration(List.of(PeerId.parse("h3:3"), PeerId.parse("h1:1"), PeerId.parse("h2:2")));
        assertSame(a.peers(), b.peers(), "equal member sets are one instance");
        assertEquals(a, b);
        Configuration other = Configuration.parse("h1:1,h2:2,h4:4");
        assertNotSame(a.peers(), other.peers());
        assertEquals(List.of("h1:1", "h2:2", "h4:4"), other.peers().stream().map(PeerId::toString).toList());
        assertThrows(UnsupportedOperationException.class, () -> a.peers().add(PeerId.parse("h9:9")), "a shared set cannot be changed");
    }
}
