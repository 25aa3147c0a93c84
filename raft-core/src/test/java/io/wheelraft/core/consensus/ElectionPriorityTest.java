package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The priority rules on their own: which priority is in effect, who never leads, the orders and the waits. */
class ElectionPriorityTest {

    private static final PeerId N1 = PeerId.parse("n1:1");
    private static final PeerId N2 = PeerId.parse("n2:2");
    private static final PeerId N3 = PeerId.parse("n3:3");
    private static final PeerId N4 = PeerId.parse("n4:4");

    private static Membership m(String conf) {
        return Membership.of(Configuration.parse(conf));
    }

    @Test
    void theConfigurationsValueWinsOverTheAdvertisedOneWhichWinsOverTheDefault() {
        Membership m = m("n1:1/priority=7,n2:2,n3:3/priority=0");
        assertEquals(7, ElectionPriority.effective(m, N1, 2), "explicit beats advertised");
        assertEquals(0, ElectionPriority.effective(m, N3, 9), "an explicit 0 beats what the node advertises");
        assertEquals(4, ElectionPriority.effective(m, N2, 4), "advertised, when the configuration sets none");
        assertEquals(1, ElectionPriority.effective(m, N2, ElectionPriority.UNKNOWN), "the default when nothing was heard");
        assertEquals(0, ElectionPriority.effective(m, N2, 0), "an advertised 0 counts");
    }

    @Test
    void aWitnessCountsAsPriorityZeroWhateverItSays() {
        Membership m = m("n1:1,n2:2,n3:3/witness/priority=5");
        assertEquals(0, ElectionPriority.effective(m, N3, 5));
        assertTrue(ElectionPriority.configuredNeverLeads(m, N3));
    }

    @Test
    void whileJointTheNewHalfsPriorityIsReadFirstThenTheOldOnes() {
        Configuration now = Configuration.parse("n1:1/priority=3,n2:2,n4:4");
        Configuration before = Configuration.parse("n1:1/priority=9,n2:2,n3:3/priority=6");
        Membership joint = new Membership(now, before, 5);
        assertEquals(3, ElectionPriority.effective(joint, N1, ElectionPriority.UNKNOWN));
        assertEquals(6, ElectionPriority.effective(joint, N3, ElectionPriority.UNKNOWN));
    }

    @Test
    void onlyAnExplicitZeroOrAWitnessMarkRulesACandidateOutForVoters() {
        Membership m = m("n1:1/priority=0,n2:2,n3:3/priority=2");
        assertTrue(ElectionPriority.configuredNeverLeads(m, N1));
        assertFalse(ElectionPriority.configuredNeverLeads(m, N2), "no explicit value: the voter cannot know, the node itself keeps to it");
        assertFalse(ElectionPriority.configuredNeverLeads(m, N3));
    }

    @Test
    void ownPriorityIsTheOptionUnlessTheConfigurationSetsOne() {
        RaftConfig mine = CoreNode.config(N2, 4, 64).withElectionPriority(0);
        assertEquals(0, ElectionPriority.own(m("n1:1,n2:2,n3:3"), mine));
        assertEquals(4, ElectionPriority.own(m("n1:1,n2:2/priority=4,n3:3"), mine));
    }

    @Test
    void preferredFirstRanksByPriorityThenLogThenId() {
        Map<PeerId, Integer> priority = Map.of(N1, 1, N2, 5, N3, 5, N4, 1);
        Map<PeerId, Long> match = Map.of(N1, 10L, N2, 8L, N3, 9L, N4, 10L);
        List<PeerId> ranked = new ArrayList<>(List.of(N1, N2, N3, N4));
        ranked.sort(ElectionPriority.preferredFirst(priority::get, match::get));
        assertEquals(List.of(N3, N2, N1, N4), ranked, "n2 and n3 first by priority (n3 holds more), then n1 before n4 by id");
    }

    @Test
    void aFollowerCountsTheVotersItKnowsArePreferredLeavingOutTheLostLeader() {
        Membership m = m("n1:1/priority=9,n2:2/priority=5,n3:3,n4:4/priority=0");
        assertEquals(2, ElectionPriority.knownPreferred(m, N3, null, 1), "n1 and n2 outrank n3");
        assertEquals(1, ElectionPriority.knownPreferred(m, N3, N1, 1), "the lost leader is not waited for");
        assertEquals(0, ElectionPriority.knownPreferred(m, N1, null, 9));
        assertEquals(1, ElectionPriority.knownPreferred(m, N2, null, 5));
    }

    @Test
    void thePlaceWithoutATurnGoesByKnownPriorityThenIdAndSkipsThoseThatNeverLead() {
        Membership m = m("n1:1/priority=0,n2:2,n3:3/priority=4,n4:4");
        assertEquals(1, ElectionPriority.place(m, N3, null, 4), "the highest goes first");
        assertEquals(2, ElectionPriority.place(m, N2, null, 1), "after n3; n1 never leads");
        assertEquals(3, ElectionPriority.place(m, N4, null, 1), "after n3, and n2 by id");
        assertEquals(2, ElectionPriority.place(m, N4, N3, 1), "without the lost leader n3: after n2 only");
    }
}
