package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import org.junit.jupiter.api.Test;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When a follower may back a candidate against its leader ({@link LeaderLiveness}): the hold after a
 * broken connection that a leader's read lease relies on, its shortening once the leader's process
 * is known gone, and the failover turn.
 */
class LeaderLivenessTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);

    private static CoreNode follower() {
        return CoreNode.create(N2, peers(3), 0, new long[0], 0);
    }

    private static AppendEntriesRequest heartbeat(long term, boolean lease, int turn) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(term).setHeartbeat(true)
                .setNoLease(!lease).setFailoverTurn(turn).build();
    }

    @Test
    void withoutABreakTheLeaderCountsAsLostOnlyAfterAnElectionTimeoutOfSilence() {
        CoreNode f = follower();
        f.core.handleAppendEntries(heartbeat(1, true, 0), 100);
        LeaderLiveness w = f.core.election().liveness();
        assertEquals(100 + ELECTION_TIMEOUT_MS, w.lostForVotingAtMs());
        assertFalse(w.lostForVoting(100 + ELECTION_TIMEOUT_MS - 1));
        assertTrue(w.lostForVoting(100 + ELECTION_TIMEOUT_MS));
        assertFalse(w.leaderLost(100 + ELECTION_TIMEOUT_MS - 1));
    }

    @Test
    void aBrokenConnectionShortensTheHoldToTheLastHeartbeatPlusTheBrokenLeaderHold() {
        CoreNode f = follower();
        f.core.handleAppendEntries(heartbeat(1, true, 0), 100);
        f.core.onConnectionLost(N1.endpoint(), 150);
        LeaderLiveness w = f.core.election().liveness();
        assertTrue(w.sawConnectionBreak());
        assertTrue(w.leaderLost(150), "a broken connection is a lost leader for starting a pre-vote");
        assertEquals(100 + f.config.brokenLeaderHoldMs(), w.lostForVotingAtMs());
    }

    @Test
    void onceTheProcessIsGoneOnlyHeartbeatsThatCouldCarryALeaseAreWaitedFor() {
        CoreNode f = follower();
        f.core.handleAppendEntries(heartbeat(1, true, 0), 100);
        f.core.handleAppendEntries(heartbeat(1, false, 0), 180); // a heartbeat the leader may not count toward a lease
        f.core.onConnectionLost(N1.endpoint(), 200);
        LeaderLiveness w = f.core.election().liveness();
        long hold = f.config.brokenLeaderHoldMs();
        assertEquals(180 + hold, w.lostForVotingAtMs(), "a live leader's next heartbeat may still be on its way");

        f.core.onPeerGone(N1.endpoint(), 210);
        assertTrue(w.processGone());
        assertEquals(100 + hold, w.lostForVotingAtMs(), "no heartbeat can come; only the lease's part of the hold is left");
    }

    @Test
    void theLeaderSpeakingAgainEndsTheBreak() {
        CoreNode f = follower();
        f.core.handleAppendEntries(heartbeat(1, true, 0), 100);
        f.core.onConnectionLost(N1.endpoint(), 150);
        f.core.onPeerGone(N1.endpoint(), 160);
        f.core.handleAppendEntries(heartbeat(1, true, 0), 250);
        LeaderLiveness w = f.core.election().liveness();
        assertFalse(w.sawConnectionBreak());
        assertFalse(w.processGone());
        assertEquals(250 + ELECTION_TIMEOUT_MS, w.lostForVotingAtMs());
    }

    @Test
    void theTurnCountsOnlyForTheLeaderAndTermThatToldIt() {
        CoreNode f = follower();
        f.core.handleAppendEntries(heartbeat(1, true, 2), 100);
        LeaderLiveness w = f.core.election().liveness();
        assertEquals(2, w.knownTurn());
        assertEquals(100 + ELECTION_TIMEOUT_MS + f.config.silentLeaderMarginMs() + f.config.failoverSlotMs(), w.silentTurnAtMs());

        f.core.observeTerm(2, 200); // a newer term: no leader of it has told a turn yet
        assertEquals(0, w.knownTurn());
    }

    @Test
    void aFreshNodeThatFollowedNoLeaderBacksACandidateWithoutWaiting() {
        CoreNode f = follower();
        f.core.enableFastFirstElection(50, 0);
        LeaderLiveness w = f.core.election().liveness();
        assertTrue(w.followedNoLeader());
        assertTrue(w.lostForVoting(0), "no lease rests on a node that never acknowledged a leader");

        f.core.handleAppendEntries(heartbeat(1, true, 0), 100);
        assertFalse(w.followedNoLeader());
        assertFalse(w.lostForVoting(101));
    }
}
