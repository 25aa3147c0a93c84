package io.wheelraft.core.sim;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-node Micrometer metrics, read from a registry while a simulated cluster runs. */
class NodeMetricsSimulationTest {

    private static final int T = 150;

    @Test
    void nodesReportTermsLatenciesLeadershipAndReplicationLagAndUnregisterWhenStopped() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CommittedLog committed = new CommittedLog("seed 7");
        SimCluster c = new SimCluster(7, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(T).meterRegistry(registry));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T));
        int leader = c.leaderIndex();
        String leaderTag = c.peer(leader).toString();
        for (int k = 0; k < 20; k++) {
            c.node(leader).apply(new Task(CounterFsm.delta(1), null));
        }
        assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(0)).value() == 20 && ((CounterFsm) c.stateMachine(1)).value() == 20
                && ((CounterFsm) c.stateMachine(2)).value() == 20, 20L * T));
        c.runFor(3L * T);

        for (int i = 0; i < 3; i++) {
            Gauge term = registry.find("wheelraft.term").tag("peer", c.peer(i).toString()).gauge();
            assertNotNull(term, "no term gauge for " + c.peer(i));
            assertEquals(c.node(i).status().term(), (long) term.value());
            assertEquals(c.node(i).status().appliedIndex(),
                    (long) registry.find("wheelraft.applied.index").tag("peer", c.peer(i).toString()).gauge().value());
            Timer apply = registry.find("wheelraft.apply.latency").tag("peer", c.peer(i).toString()).timer();
            assertTrue(apply.count() >= 1, "no apply latency recorded on " + c.peer(i));
        }
        assertEquals(1.0, registry.find("wheelraft.leader").tag("peer", leaderTag).gauge().value());
        assertTrue(registry.find("wheelraft.elections.started").tag("peer", leaderTag).counter().count() >= 1);
        assertTrue(registry.find("wheelraft.leader.changes").tag("peer", leaderTag).counter().count() >= 1);
        Timer commit = registry.find("wheelraft.commit.latency").tag("peer", leaderTag).timer();
        assertTrue(commit.count() >= 1 && commit.count() <= 20, "commit latency counts batches: " + commit.count());
        assertTrue(registry.find("wheelraft.append.latency").tag("peer", leaderTag).timer().count() >= 1);
        int follower = (leader + 1) % 3;
        Gauge lag = registry.find("wheelraft.replication.lag").tag("peer", leaderTag).tag("follower", c.peer(follower).toString()).gauge();
        assertNotNull(lag, "no replication-lag gauge for the follower");
        assertEquals(0.0, lag.value(), "a caught-up follower lags by nothing");

        // A follower cut off falls behind, and the gauge says by how much.
        c.partition(java.util.List.of(follower), java.util.List.of(leader, 3 - leader - follower));
        for (int k = 0; k < 10; k++) {
            c.node(leader).apply(new Task(CounterFsm.delta(1), null));
        }
        c.runFor(2L * T);
        assertEquals(10.0, lag.value(), "the cut-off follower should be 10 entries behind");

        c.crash(follower, true);
        assertNull(registry.find("wheelraft.term").tag("peer", c.peer(follower).toString()).gauge(), "a stopped node's meters stay registered");
    }

    @Test
    void nodesWithoutNodeMetricsRegisterNothingAndStillServe() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CommittedLog committed = new CommittedLog("seed 8");
        SimCluster c = new SimCluster(8, 3, i -> new CounterFsm(i, committed),
                o -> o.electionTimeoutMs(T).meterRegistry(registry).nodeMetrics(false));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T));
        int leader = c.leaderIndex();
        for (int k = 0; k < 5; k++) {
            c.node(leader).apply(new Task(CounterFsm.delta(1), null));
        }
        assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(0)).value() == 5 && ((CounterFsm) c.stateMachine(1)).value() == 5
                && ((CounterFsm) c.stateMachine(2)).value() == 5, 20L * T));
        assertEquals(0, registry.getMeters().size(), "meters registered: " + registry.getMeters());
        c.crash(leader, true); // closing a node without meters is fine too
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0 && c.leaderIndex() != leader, 40L * T));
    }
}
