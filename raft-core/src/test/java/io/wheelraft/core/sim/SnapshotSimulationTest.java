package io.wheelraft.core.sim;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Snapshots, log compaction and InstallSnapshot (Raft §7) in the simulated cluster. */
class SnapshotSimulationTest {

    private static final int T = 150;

    private static SimCluster cluster(long seed, Consumer<NodeOptions> tuning) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> tuning.accept(o.electionTimeoutMs(T)));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "no leader; " + c.replayHint());
        return c;
    }

    private static CounterFsm fsm(SimCluster c, int i) {
        return (CounterFsm) c.stateMachine(i);
    }

    /** Commits {@code n} increments of 1 through whoever leads. */
    private static void write(SimCluster c, int n) {
        int[] done = new int[1];
        int sent = 0;
        while (done[0] < n) {
            int l = c.leaderIndex();
            assertTrue(l >= 0 || c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "no leader; " + c.replayHint());
            int target = done[0] + Math.min(50, n - done[0]);
            for (; sent < target; sent++) {
                c.node(c.leaderIndex()).apply(new Task(CounterFsm.delta(1), s -> {
                    if (s.isOk()) {
                        done[0]++;
                    }
                }));
            }
            int want = target;
            c.runUntil(() -> done[0] >= want, 10L * T);
            sent = done[0];
        }
    }

    private static Status snapshot(SimCluster c, int i) {
        Status[] result = new Status[1];
        c.node(i).snapshot(s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T), "snapshot of node " + i + " never finished; " + c.replayHint());
        return result[0];
    }

    private static List<Integer> others(SimCluster c, int i) {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < c.size(); k++) {
            if (k != i) {
                out.add(k);
            }
        }
        return out;
    }

    private static int aFollower(SimCluster c) {
        return (c.leaderIndex() + 1) % c.size();
    }

    private static void assertConverged(SimCluster c) {
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "no leader; " + c.replayHint());
        long target = fsm(c, c.leaderIndex()).lastAppliedIndex();
        assertTrue(c.runUntil(() -> {
            for (int i = 0; i < c.size(); i++) {
                if (fsm(c, i).lastAppliedIndex() < target) {
                    return false;
                }
            }
            return true;
        }, 40L * T), "nodes did not converge; " + c.replayHint());
        long value = fsm(c, c.leaderIndex()).value();
        for (int i = 0; i < c.size(); i++) {
            assertEquals(value, fsm(c, i).value(), "node " + i + " diverged; " + c.replayHint());
        }
    }

    /** Cuts follower {@code f} off, writes, snapshots and compacts the rest: f's next entry is gone. */
    private static void leaveBehind(SimCluster c, int f, int writes) {
        write(c, 10);
        List<Integer> rest = others(c, f);
        c.partition(rest, List.of(f));
        write(c, writes);
        // A follower learns the last commit with the leader's next message: snapshot only once
        // every node of the majority applied all of it, or its snapshot may end before f's log does.
        long target = fsm(c, c.leaderIndex()).lastAppliedIndex();
        assertTrue(c.runUntil(() -> rest.stream().allMatch(i -> fsm(c, i).lastAppliedIndex() >= target), 20L * T),
                "the majority did not apply " + target + "; " + c.replayHint());
        for (int i : rest) {
            assertTrue(snapshot(c, i).isOk(), "snapshot of node " + i);
        }
        c.runFor(10); // the compaction runs on the disk lane, behind the appends
        long followerLast = c.logStorage(f).lastLogIndex();
        for (int i : rest) {
            assertTrue(c.logStorage(i).firstLogIndex() > followerLast + 1,
                    "node " + i + " still holds the follower's next entry: first " + c.logStorage(i).firstLogIndex() + ", follower last " + followerLast);
        }
    }

    @Test
    void partitionedFollowerCatchesUpByInstallSnapshot() {
        SimCluster c = cluster(21, o -> o.snapshotLogMargin(5));
        int f = aFollower(c);
        leaveBehind(c, f, 100);
        assertEquals(0, fsm(c, f).snapshotsLoaded());
        c.heal();
        assertConverged(c);
        assertEquals(1, fsm(c, f).snapshotsLoaded(), "the follower should have caught up by one snapshot");
        // And it keeps replicating normally afterwards.
        write(c, 20);
        assertConverged(c);
    }

    @Test
    void restartLoadsTheSnapshotAndReplaysOnlyTheLogAfterIt() {
        SimCluster c = cluster(22, o -> o.snapshotLogMargin(0));
        write(c, 60);
        int n = aFollower(c);
        assertTrue(c.runUntil(() -> fsm(c, n).value() == 60, 20L * T));
        assertTrue(snapshot(c, n).isOk());
        long snapshotIndex = fsm(c, n).lastAppliedIndex();
        write(c, 25);
        assertTrue(c.runUntil(() -> fsm(c, n).value() == 85, 20L * T));
        c.runFor(10);
        assertEquals(snapshotIndex + 1, c.logStorage(n).firstLogIndex(), "log compacted up to the snapshot (margin 0)");
        c.crash(n, true);
        c.restart(n);
        CounterFsm restarted = fsm(c, n);
        assertEquals(1, restarted.snapshotsLoaded());
        assertTrue(c.runUntil(() -> restarted.value() == 85, 20L * T), "restarted node did not replay the suffix; " + c.replayHint());
        assertTrue(restarted.firstAppliedIndex() > snapshotIndex,
                "replayed from " + restarted.firstAppliedIndex() + " although the snapshot ends at " + snapshotIndex);
        assertConverged(c);
    }

    @Test
    void snapshotTransferResumesAfterLostChunks() {
        SimCluster c = cluster(23, o -> o.snapshotLogMargin(2).snapshotChunkBytes(64));
        for (int i = 0; i < c.size(); i++) {
            fsm(c, i).snapshotPadding = 4096; // 65 chunks
        }
        int f = aFollower(c);
        leaveBehind(c, f, 60);
        long droppedBefore = c.network().messagesDropped();
        c.faults().dropRate(0.15);
        c.heal();
        assertTrue(c.runUntil(() -> fsm(c, f).snapshotsLoaded() == 1, 200L * T), "snapshot never installed; " + c.replayHint());
        assertTrue(c.network().messagesDropped() > droppedBefore);
        c.faults().dropRate(0);
        assertConverged(c);
    }

    @Test
    void snapshotsUnderPeriodicTimerKeepTheLogShort() {
        SimCluster c = cluster(24, o -> o.snapshotIntervalSecs(1).snapshotLogMargin(10));
        write(c, 200);
        c.runFor(1500);
        for (int i = 0; i < c.size(); i++) {
            assertTrue(fsm(c, i).snapshotsSaved() >= 1, "node " + i + " never snapshotted on its timer");
            assertTrue(c.logStorage(i).firstLogIndex() > 100, "node " + i + " did not compact: first " + c.logStorage(i).firstLogIndex());
        }
        assertConverged(c);
    }

    @Test
    void secondSnapshotWhileOneRunsIsBusyAndAnUnchangedStateIsNotSavedAgain() {
        SimCluster c = cluster(25, o -> o.snapshotLogMargin(0));
        write(c, 10);
        int l = c.leaderIndex();
        Status[] first = new Status[1];
        Status[] second = new Status[1];
        c.node(l).snapshot(s -> first[0] = s);
        c.node(l).snapshot(s -> second[0] = s);
        assertTrue(c.runUntil(() -> first[0] != null && second[0] != null, 10L * T));
        assertTrue(first[0].isOk(), first[0].toString());
        assertEquals(RaftError.BUSY, second[0].code());
        int saved = fsm(c, l).snapshotsSaved();
        assertTrue(snapshot(c, l).isOk());
        assertEquals(saved, fsm(c, l).snapshotsSaved(), "nothing was applied since, so nothing is saved");
    }

    @Test
    void failedSaveIsReportedAndTheNodeKeepsServing() {
        SimCluster c = cluster(26, o -> o.snapshotLogMargin(0));
        write(c, 10);
        int l = c.leaderIndex();
        fsm(c, l).failSaves = true;
        long firstBefore = c.logStorage(l).firstLogIndex();
        Status s = snapshot(c, l);
        assertFalse(s.isOk());
        assertEquals(RaftError.STATE_MACHINE_ERROR, s.code());
        c.runFor(10);
        assertEquals(0, fsm(c, l).errors(), "a save the state machine failed is abandoned; onError would say the node stopped");
        assertEquals(firstBefore, c.logStorage(l).firstLogIndex(), "nothing compacted without a snapshot");
        assertEquals(Role.LEADER, c.node(l).status().role());
        write(c, 10);
        fsm(c, l).failSaves = false;
        assertTrue(snapshot(c, l).isOk(), "a later save works");
        assertConverged(c);
    }

    @Test
    void failedLoadOfAnInstalledSnapshotStopsTheFollower() {
        SimCluster c = cluster(27, o -> o.snapshotLogMargin(3));
        int f = aFollower(c);
        leaveBehind(c, f, 40);
        fsm(c, f).failLoads = true;
        c.heal();
        assertTrue(c.runUntil(() -> c.node(f).status().role() == Role.ERROR, 40L * T), "follower did not stop; " + c.replayHint());
        c.runFor(10);
        assertTrue(fsm(c, f).errors() >= 1, "onError should report the failed load");
        Status[] read = new Status[1];
        c.node(f).readIndex((st, index) -> read[0] = st);
        c.runFor(5);
        assertNotNull(read[0]);
        assertFalse(read[0].isOk(), "a stopped node must not serve reads");
        // The rest of the group carries on.
        write(c, 5);
    }

    @Test
    void failedLoadAtRestartLeavesTheNodeStopped() {
        boolean[] failLoads = new boolean[3];
        CommittedLog committed = new CommittedLog("seed 28");
        SimCluster c = new SimCluster(28, 3, i -> {
            CounterFsm fsm = new CounterFsm(i, committed);
            fsm.failLoads = failLoads[i];
            return fsm;
        }, o -> o.electionTimeoutMs(T).snapshotLogMargin(0));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T));
        write(c, 20);
        int n = aFollower(c);
        assertTrue(c.runUntil(() -> fsm(c, n).value() == 20, 20L * T));
        assertTrue(snapshot(c, n).isOk());
        c.crash(n, true);
        failLoads[n] = true;
        c.restart(n);
        assertEquals(Role.ERROR, c.node(n).status().role());
        assertEquals(1, fsm(c, n).errors());
        boolean[] applied = new boolean[1];
        c.node(n).apply(new Task(CounterFsm.delta(1), st -> applied[0] = !st.isOk()));
        assertTrue(applied[0], "a stopped node refuses tasks");
        write(c, 5); // the other two go on
    }
}
