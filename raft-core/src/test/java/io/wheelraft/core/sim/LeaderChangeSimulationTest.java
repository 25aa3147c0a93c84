package io.wheelraft.core.sim;

import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Node#leaderChange}: a follower's waiter hears of the election that replaces a crashed leader. */
class LeaderChangeSimulationTest {

    private static final long T = 1000;

    @Test
    void aFollowersWaiterCompletesWhenItLearnsOfTheNewLeader() {
        for (long seed = 1; seed <= 5; seed++) {
            CommittedLog committed = new CommittedLog("seed " + seed);
            SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs((int) T).quiesceAfterMs(0));
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20 * T), "no leader; " + c.replayHint());
            int leader = c.leaderIndex();
            int follower = (leader + 1) % 3;
            assertTrue(c.runUntil(() -> c.peer(leader).equals(c.node(follower).getLeaderId()), 5 * T), "the follower never heard of its leader; " + c.replayHint());
            NodeStatus before = c.node(follower).status();
            CompletableFuture<Void> change = c.node(follower).leaderChange(before.term(), before.leader());
            c.runFor(3 * T);
            assertFalse(change.isDone(), "completed while the same leader led on; " + c.replayHint());

            c.crash(leader, true);
            assertTrue(c.runUntil(change::isDone, 20 * T), "no change seen after the leader crashed; " + c.replayHint());
            assertTrue(c.runUntil(() -> c.node(follower).getLeaderId() != null && !c.node(follower).getLeaderId().equals(c.peer(leader)), 20 * T),
                    "no new leader; " + c.replayHint());
            NodeStatus after = c.node(follower).status();
            assertNotNull(after.leader());
            assertNotEquals(c.peer(leader), after.leader());
            assertTrue(after.term() > before.term());
            assertEquals(after.leader(), c.node(follower).getLeaderId());
        }
    }

    /**
     * A follower that knows no leader: a wait from what its {@code status()} says does not complete
     * at once (its first term came from a vote request, with no role change, and the node's copy
     * of the term for waiters once lagged behind, so such a wait completed at once and a caller
     * re-arming it went round without pause), and it completes when the follower moves to a newer
     * term (it answered a candidate), although neither role nor leader changes.
     */
    @Test
    void aLeaderlessFollowersWaitHoldsUntilItsTermMoves() {
        int seen = 0;
        for (long seed = 1; seed <= 10; seed++) {
            CommittedLog committed = new CommittedLog("seed " + seed);
            SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs((int) T).quiesceAfterMs(0));
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20 * T), "no leader; " + c.replayHint());
            int leader = c.leaderIndex();
            c.crash(leader, true);
            for (int i = 0; i < 3; i++) {
                if (i == leader) {
                    continue;
                }
                int follower = i;
                // Wait until this follower has let go of the crashed leader, still a follower in the old term.
                if (!c.runUntil(() -> c.node(follower).status().leader() == null, 20 * T)) {
                    continue;
                }
                NodeStatus before = c.node(follower).status();
                if (before.role() != Role.FOLLOWER) {
                    continue;
                }
                CompletableFuture<Void> change = c.node(follower).leaderChange(before.term(), null);
                assertFalse(change.isDone(), "a wait for a change from what status() says completed at once: " + before + "; " + c.replayHint());
                assertTrue(c.runUntil(() -> c.node(follower).status().term() > before.term(), 20 * T), "the term never moved; " + c.replayHint());
                NodeStatus after = c.node(follower).status();
                if (after.role() == Role.FOLLOWER && after.leader() == null) {
                    seen++; // the case this test is about: a new term and nothing else
                    assertTrue(change.isDone(), "term " + before.term() + " -> " + after.term() + " with no leader, and the waiter did not hear; "
                            + c.replayHint());
                }
                break;
            }
        }
        assertTrue(seen > 0, "no seed gave a leaderless follower a newer term: the test checked nothing");
    }
}
