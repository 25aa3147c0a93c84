package io.wheelraft.core.sim;

import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Leader transfer by TimeoutNow (thesis §3.10) in the simulated cluster. */
class LeaderTransferSimulationTest {

    private static final int T = 150;

    private static SimCluster cluster(long seed) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(T));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), c.replayHint());
        return c;
    }

    @Test
    void transfersToAnUpToDateFollowerAndRefusesTasksMeanwhile() {
        for (long seed = 21; seed < 41; seed++) {
            SimCluster c = cluster(seed);
            int old = c.leaderIndex();
            int target = (old + 1) % 3;
            Status[] result = new Status[1];
            Status[] task = new Status[1];
            c.node(old).transferLeadershipTo(c.peer(target), s -> result[0] = s);
            c.node(old).apply(new Task(CounterFsm.delta(1), s -> task[0] = s));
            assertTrue(c.runUntil(() -> result[0] != null, 10L * T), c.replayHint());
            assertTrue(result[0].isOk(), result[0] + "; " + c.replayHint());
            assertEquals(target, c.leaderIndex(), c.replayHint());
            assertTrue(task[0] != null && (task[0].code() == RaftError.LEADER_TRANSFERRING || task[0].code() == RaftError.NOT_LEADER),
                    "a task during the transfer was not refused: " + task[0]);
        }
    }

    @Test
    void transferToALaggingFollowerCatchesItUpFirst() {
        SimCluster c = cluster(42);
        int old = c.leaderIndex();
        int target = (old + 1) % 3;
        c.partition(java.util.List.of(target), java.util.List.of(old, (old + 2) % 3));
        for (int k = 0; k < 200; k++) {
            c.node(old).apply(new Task(CounterFsm.delta(1), null));
        }
        assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(old)).value() == 200, 10L * T));
        c.heal();
        Status[] result = new Status[1];
        c.node(old).transferLeadershipTo(c.peer(target), s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T));
        assertTrue(result[0].isOk(), result[0].toString());
        assertEquals(target, c.leaderIndex());
        assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(target)).value() == 200, 10L * T));
    }

    @Test
    void transferToAnUnreachablePeerTimesOutAndTheLeaderResumes() {
        SimCluster c = cluster(43);
        int old = c.leaderIndex();
        int target = (old + 1) % 3;
        c.crash(target, false);
        for (int k = 0; k < 5; k++) {
            c.node(old).apply(new Task(CounterFsm.delta(1), null));
        }
        Status[] result = new Status[1];
        c.node(old).transferLeadershipTo(c.peer(target), s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T));
        assertEquals(RaftError.TIMEOUT, result[0].code(), result[0].toString());
        assertEquals(old, c.leaderIndex());
        Status[] after = new Status[1];
        c.node(old).apply(new Task(CounterFsm.delta(1), s -> after[0] = s));
        assertTrue(c.runUntil(() -> after[0] != null, 10L * T));
        assertTrue(after[0].isOk(), "leader did not resume after the failed transfer: " + after[0]);
    }
}
