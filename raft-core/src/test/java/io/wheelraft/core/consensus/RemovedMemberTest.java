package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RemovedMemberTest {

    private static final PeerId A = new PeerId("a", 1);
    private static final PeerId B = new PeerId("b", 2);
    private static final PeerId C = new PeerId("c", 3);

    private static Membership conf(long index, PeerId... voters) {
        return new Membership(new Configuration(List.of(voters)), null, index);
    }

    @Test
    void aVoterReportsTheCommittedConfigurationThatLeavesTheCandidateOut() {
        assertEquals(9, RemovedMember.removedAt(C, conf(9, A, B), 12));
        assertEquals(0, RemovedMember.removedAt(B, conf(9, A, B), 12), "B is a member");
    }

    @Test
    void aVoterSaysNothingWhileItsNewestConfigurationIsUncommittedOrJoint() {
        assertEquals(0, RemovedMember.removedAt(C, conf(9, A, B), 8));
        Membership joint = new Membership(new Configuration(List.of(A, B)), new Configuration(List.of(A, B, C)), 9);
        assertEquals(0, RemovedMember.removedAt(C, joint, 12));
        assertEquals(0, RemovedMember.removedAt(C, new Membership(Configuration.empty(), null, 0), 0));
    }

    @Test
    void aLearnerIsNotReportedRemoved() {
        Membership withLearner = new Membership(new Configuration(List.of(A, B), List.of(C)), null, 9);
        assertEquals(0, RemovedMember.removedAt(C, withLearner, 12));
    }

    @Test
    void aClaimAboutAnOlderConfigurationThanOursIsNotBelieved() {
        RemovedMember r = new RemovedMember(C);
        Membership ours = conf(15, A, B, C); // we were added back at 15; the voter lags at 9
        assertFalse(r.toldRemoved(A, 9, ours));
        assertTrue(r.mayCampaign(ours));
        assertFalse(r.toldRemoved(A, 0, ours));
    }

    @Test
    void aBelievedClaimStopsCampaigningUntilALeaderCalls() {
        RemovedMember r = new RemovedMember(C);
        Membership ours = new Membership(new Configuration(List.of(A, B)), new Configuration(List.of(A, B, C)), 7);
        assertTrue(r.mayCampaign(ours));
        assertTrue(r.toldRemoved(A, 9, ours));
        assertFalse(r.mayCampaign(ours));
        r.leaderContact();
        assertTrue(r.mayCampaign(ours));
    }

    @Test
    void aNodeLeftOutOfItsOwnLatestConfigurationDoesNotCampaign() {
        RemovedMember r = new RemovedMember(C);
        assertFalse(r.mayCampaign(conf(9, A, B)));
        assertFalse(r.mayCampaign(new Membership(Configuration.empty(), null, 0)), "an empty node waits to be added");
    }
}
