package io.wheelraft.core.sim;

import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimClusterTest {

    private static final int T = 1000;

    private CommittedLog committed;

    private SimCluster cluster(long seed, int size) {
        committed = new CommittedLog("seed " + seed);
        return new SimCluster(seed, size, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(T));
    }

    private static CounterFsm fsm(SimCluster c, int i) {
        return (CounterFsm) c.stateMachine(i);
    }

    @Test
    void electsExactlyOneLeaderAndKeepsItWithoutFaults() {
        SimCluster c = cluster(1, 3);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 3L * T), "no leader within 3 election timeouts");
        int leader = c.leaderIndex();
        c.runFor(30_000);
        assertEquals(leader, c.leaderIndex(), "leadership moved in a fault-free run");
        assertEquals(1, c.leaderTerms(), "a fault-free run held more than one election");
        for (int i = 0; i < 3; i++) {
            if (i != leader) {
                assertEquals(Role.FOLLOWER, c.node(i).status().role());
                assertEquals(c.peer(leader), c.node(i).getLeaderId());
            }
        }
    }

    @Test
    void appliesCommittedCommandsOnEveryNodeInOrder() {
        SimCluster c = cluster(2, 3);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 3L * T));
        int leader = c.leaderIndex();
        List<Long> results = new ArrayList<>();
        for (int k = 1; k <= 100; k++) {
            c.node(leader).apply(new Task(CounterFsm.delta(k), new CounterFsm.Result((s, v) -> {
                assertTrue(s.isOk(), s.toString());
                results.add(v);
            })));
        }
        long expected = 100 * 101 / 2;
        assertTrue(c.runUntil(() -> fsm(c, 0).value() == expected && fsm(c, 1).value() == expected && fsm(c, 2).value() == expected, 5_000),
                "values: " + fsm(c, 0).value() + ", " + fsm(c, 1).value() + ", " + fsm(c, 2).value());
        assertEquals(100, results.size());
        for (int k = 1; k < results.size(); k++) {
            assertTrue(results.get(k) > results.get(k - 1), "results out of order: " + results);
        }
    }

    @Test
    void rejectsTasksOnFollowersWithTheLeaderHint() {
        SimCluster c = cluster(3, 3);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0 && c.node((c.leaderIndex() + 1) % 3).getLeaderId() != null, 3L * T));
        int follower = (c.leaderIndex() + 1) % 3;
        Status[] got = new Status[1];
        c.node(follower).apply(new Task(CounterFsm.delta(1), s -> got[0] = s));
        c.runFor(5);
        assertEquals(io.wheelraft.core.RaftError.NOT_LEADER, got[0].code());
        assertEquals(c.peer(c.leaderIndex()), got[0].leaderHint());
    }

    @Test
    void killedLeaderIsReplacedQuicklyAndCatchesUpAfterRestart() {
        SimCluster c = cluster(4, 3);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 3L * T));
        int old = c.leaderIndex();
        for (int k = 0; k < 50; k++) {
            c.node(old).apply(new Task(CounterFsm.delta(1), null));
        }
        assertTrue(c.runUntil(() -> fsm(c, old).value() == 50, 2_000));
        long killedAt = c.nowMs();
        c.crash(old, true);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 3L * T), "no new leader; " + c.replayHint());
        long failover = c.nowMs() - killedAt;
        assertTrue(failover < T, "failover after a kill took " + failover + " ms, expected well under the election timeout");
        int leader = c.leaderIndex();
        assertNotEquals(old, leader);
        c.node(leader).apply(new Task(CounterFsm.delta(10), null));
        c.restart(old);
        assertTrue(c.runUntil(() -> fsm(c, old).value() == 60, 5_000), "restarted node did not catch up: " + fsm(c, old).value());
    }
}
