package io.wheelraft.core.sim;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Disk faults in the simulated cluster, injected at the storage SPI: a log that lost synced
 * entries at restart (the node fences itself and is repaired from the leader), a failed write
 * or fsync (the node stops for good), an entry that cannot be read back (the node stops with
 * one error), a lost meta file (the node refuses to start). The committed log never changes
 * (CommittedLog) and every node converges to the same counter.
 */
class StorageFaultSimulationTest {

    private static final int T = 150;

    private static SimCluster cluster(long seed, Consumer<NodeOptions> tuning) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> tuning.accept(o.electionTimeoutMs(T)));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "no leader; " + c.replayHint());
        return c;
    }

    private static SimCluster cluster(long seed) {
        return cluster(seed, o -> { });
    }

    private static CounterFsm fsm(SimCluster c, int i) {
        return (CounterFsm) c.stateMachine(i);
    }

    private static Role role(SimCluster c, int i) {
        return c.node(i).status().role();
    }

    /** Commits {@code n} increments of 1 through whoever leads; fails if they do not commit in time. */
    private static void write(SimCluster c, int n) {
        int[] done = new int[1];
        for (int k = 0; k < n; k++) {
            int before = done[0];
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 30L * T), "no leader; " + c.replayHint());
            c.node(c.leaderIndex()).apply(new Task(CounterFsm.delta(1), s -> {
                if (s.isOk()) {
                    done[0]++;
                }
            }));
            if (!c.runUntil(() -> done[0] > before, 10L * T)) {
                k--; // lost with a deposed leader: retry on the next one
            }
        }
    }

    private static void assertConverged(SimCluster c, long atLeast) {
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 30L * T), "no leader; " + c.replayHint());
        long target = Math.max(atLeast, fsm(c, c.leaderIndex()).lastAppliedIndex());
        assertTrue(c.runUntil(() -> {
            for (int i = 0; i < c.size(); i++) {
                if (fsm(c, i).lastAppliedIndex() < target) {
                    return false;
                }
            }
            return true;
        }, 60L * T), "nodes did not converge to " + target + "; " + c.replayHint());
        long value = fsm(c, c.leaderIndex()).value();
        for (int i = 0; i < c.size(); i++) {
            assertEquals(value, fsm(c, i).value(), "node " + i + " diverged; " + c.replayHint());
        }
    }

    private static Status readOn(SimCluster c, int i) {
        Status[] result = new Status[1];
        c.node(i).readIndex((s, index) -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T), "read never answered");
        return result[0];
    }

    /**
     * The scenario of a real WAL losing its synced tail: an entry is committed by the leader L and
     * N alone (M is cut off), N restarts having lost it, and L dies. M and N must not elect a
     * leader without it: the group stalls instead. When L returns, it leads, repairs N, and the
     * entry is applied everywhere. Without the fence, M and N elect one of themselves and the
     * entry is overwritten.
     */
    @Test
    void aNodeThatLostAcknowledgedEntriesCannotHelpElectALeaderWithoutThem() {
        SimMeters meters = new SimMeters();
        SimCluster c = cluster(41, o -> o.meterRegistry(meters.registry));
        write(c, 10);
        int l = c.leaderIndex();
        int n = (l + 1) % 3;
        int m = (l + 2) % 3;
        c.partition(List.of(l, n), List.of(m));
        write(c, 20);
        long committed = fsm(c, l).lastAppliedIndex();
        long valueBefore = fsm(c, l).value();
        long mLast = c.logStorage(m).lastLogIndex();
        assertTrue(mLast < committed, "M must lag: " + mLast + " vs " + committed);

        c.crash(n, true);
        c.simLog(n).loseTailAtRestart(mLast); // N's WAL drops everything M lacks
        c.crash(l, true);
        c.heal();
        c.restart(n);
        assertEquals(Role.REPAIRING, role(c, n), "a node that lost synced entries must start fenced");
        assertTrue(c.metaStorage(n).repairing());

        assertEquals(1.0, meters.registry.get("wheelraft.repairing").tag("peer", c.peer(n).toString()).gauge().value());
        c.runFor(30L * T);
        assertEquals(-1, c.leaderIndex(), "M and N elected a leader lacking committed entry " + committed + "; " + c.replayHint());
        assertEquals(Role.REPAIRING, role(c, n), "N campaigned or unfenced without a leader");
        Status read = readOn(c, n);
        assertFalse(read.isOk());
        assertTrue(read.message().contains("repairing"), read.message());

        // A restart in the middle of the repair keeps the fence.
        c.crash(n, true);
        c.restart(n);
        assertEquals(Role.REPAIRING, role(c, n));

        c.restart(l);
        assertTrue(c.runUntil(() -> c.leaderIndex() == l, 40L * T), "L did not lead again; " + c.replayHint());
        assertTrue(c.runUntil(() -> role(c, n) == Role.FOLLOWER, 40L * T), "N was never repaired; " + c.replayHint());
        assertFalse(c.metaStorage(n).repairing(), "the repaired flag must be durable");
        assertEquals(0.0, meters.registry.get("wheelraft.repairing").tag("peer", c.peer(n).toString()).gauge().value());
        assertConverged(c, committed);
        assertTrue(fsm(c, n).value() >= valueBefore, "the committed increments survived");
        write(c, 5);
        assertConverged(c, committed + 5);

        // Repaired, N votes (and may lead) again: without L, M and N elect a leader holding everything.
        c.crash(l, true);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 40L * T), "N and M could not elect after the repair; " + c.replayHint());
        write(c, 5);
        assertTrue(fsm(c, c.leaderIndex()).value() >= valueBefore + 10);
    }

    @Test
    void aNodeThatLostEntriesTheLeaderCompactedAwayIsRepairedByInstallSnapshot() {
        SimCluster c = cluster(48, o -> o.snapshotLogMargin(5));
        write(c, 40);
        int l = c.leaderIndex();
        int f = (l + 1) % 3;
        Status[] saved = new Status[1];
        c.node(l).snapshot(s -> saved[0] = s);
        assertTrue(c.runUntil(() -> saved[0] != null, 10L * T));
        assertTrue(saved[0].isOk(), saved[0].toString());
        c.runFor(10);
        assertTrue(c.logStorage(l).firstLogIndex() > 4, "the leader must have compacted its log");

        c.crash(f, true);
        c.simLog(f).loseTailAtRestart(3);
        c.restart(f);
        assertEquals(Role.REPAIRING, role(c, f));
        assertTrue(c.runUntil(() -> role(c, f) == Role.FOLLOWER, 40L * T), "never repaired; " + c.replayHint());
        assertEquals(1, fsm(c, f).snapshotsLoaded(), "the lost entries can only come back in the leader's snapshot");
        assertConverged(c, 40);
    }

    @Test
    void aLeaderWhoseLogWriteFailsStopsAndTheOthersCarryOn() {
        SimMeters meters = new SimMeters();
        SimCluster c = cluster(42, o -> o.meterRegistry(meters.registry));
        write(c, 10);
        int l = c.leaderIndex();
        c.logStorage(l).faults().failAllWrites(new StorageException("/data/log/000012.log: append: No space left on device"));
        write(c, 10);
        assertEquals(Role.ERROR, role(c, l), "a leader whose append failed must stop");
        assertNotEquals(l, c.leaderIndex());
        assertEquals(1.0, meters.registry.get("wheelraft.failed").tag("peer", c.peer(l).toString()).gauge().value());
        assertEquals(1, fsm(c, l).errors(), "onError once, not once per retry");
        long term = c.node(l).status().term();
        c.runFor(20L * T);
        assertEquals(term, c.node(l).status().term(), "a failed node took part in elections");

        c.crash(l, true);
        c.repairDisk(l);
        c.restart(l);
        assertConverged(c, 20);
    }

    @Test
    void aBackgroundStorageFailureStopsTheLeader() {
        SimCluster c = cluster(43);
        write(c, 5);
        int l = c.leaderIndex();
        c.simLog(l).failInBackground(new StorageException("rocksdb background flush of /data/log: No space left on device"));
        c.runFor(1);
        assertEquals(Role.ERROR, role(c, l));
        write(c, 5);
        assertNotEquals(l, c.leaderIndex());
    }

    @Test
    void aTermThatCannotBeWrittenStopsTheNodeBeforeItIsUsed() {
        termWriteFailureThenRecovery(44);
    }

    /**
     * The same over many seeds. A stopped node answers requests as not hosting the group, which a
     * pre-vote round waits out (asking again); in 17 of the first 300 seeds the two healthy nodes
     * refused each other's concurrent pre-votes and then, each round waiting on the stopped node,
     * never elected again (seeds 13, 22, 31, 34, 43, 49, 50 and 51 among the first 60). A pre-vote
     * round still undecided an election timeout after its start now ends as lost.
     */
    @Test
    void twoHealthyNodesElectWhateverTheSchedule() {
        for (long seed = 1; seed <= 60; seed++) {
            termWriteFailureThenRecovery(seed);
        }
    }

    private static void termWriteFailureThenRecovery(long seed) {
        SimCluster c = cluster(seed);
        write(c, 5);
        int l = c.leaderIndex();
        int f = (l + 1) % 3;
        int other = (l + 2) % 3;
        long term = c.node(f).status().term();
        c.metaStorage(f).faults().failAllWrites(new StorageException("cannot persist term to /data/raft_meta: No space left on device"));
        c.crash(l, true);
        assertTrue(c.runUntil(() -> role(c, f) == Role.ERROR, 40L * T), "the node never tried a new term; " + c.replayHint());
        assertEquals(term, c.node(f).status().term(), "a term that is not on disk was used");
        assertEquals(-1, c.leaderIndex(), "one healthy node of three cannot elect");
        c.restart(l);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 40L * T), "two healthy nodes of three elect no one; " + c.replayHint());
        write(c, 5);
        c.crash(f, true);
        c.repairDisk(f);
        c.restart(f);
        assertConverged(c, 10);
        assertNotEquals(Role.ERROR, role(c, other));
    }

    @Test
    void anEntryThatCannotBeReadStopsTheNodeOnceAndItIsRepairedAfterTheDiskIs() {
        SimCluster c = cluster(45);
        write(c, 20);
        int f = (c.leaderIndex() + 1) % 3;
        c.simLog(f).corrupt(5);
        c.crash(f, true);
        c.restart(f); // the open does not notice; applying entry 5 reads it
        assertTrue(c.runUntil(() -> role(c, f) == Role.ERROR, 20L * T), "the unreadable entry was not noticed; " + c.replayHint());
        assertEquals(4, fsm(c, f).lastAppliedIndex(), "applied past an unreadable entry");
        c.runFor(10L * T);
        assertEquals(1, fsm(c, f).errors(), "the failure is reported once, not on every retry");
        write(c, 5);

        c.crash(f, true);
        c.repairDisk(f); // found at open this time: the log is cut before it and the node is fenced
        c.restart(f);
        assertEquals(Role.REPAIRING, role(c, f));
        assertTrue(c.runUntil(() -> role(c, f) == Role.FOLLOWER, 40L * T), "never repaired; " + c.replayHint());
        assertConverged(c, 25);
    }

    @Test
    void aNodeWhoseMetaIsLostRefusesToStart() {
        SimCluster c = cluster(46);
        write(c, 5);
        int f = (c.leaderIndex() + 1) % 3;
        c.crash(f, true);
        c.metaStorage(f).forget();
        c.restart(f);
        assertEquals(Role.ERROR, role(c, f), "a node that forgot its vote must not start");
        assertEquals(1, fsm(c, f).errors());
        write(c, 5); // the other two carry on
    }

    @Test
    void aSnapshotStorageFailureStopsTheNodeButAStateMachineFailureDoesNot() {
        SimCluster c = cluster(47);
        write(c, 10);
        int f = (c.leaderIndex() + 1) % 3;
        fsm(c, f).failSaves = true;
        Status[] result = new Status[1];
        c.node(f).snapshot(s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T));
        assertEquals(RaftError.STATE_MACHINE_ERROR, result[0].code());
        assertEquals(Role.FOLLOWER, role(c, f), "a save the state machine failed is no storage fault");

        fsm(c, f).failSaves = false;
        write(c, 5);
        c.snapshotStorage(f).faults().failNextWrite(new StorageException("/data/snapshot/temp: fsync: Input/output error"));
        result[0] = null;
        c.node(f).snapshot(s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 10L * T));
        assertEquals(RaftError.STORAGE_ERROR, result[0].code());
        c.runFor(1);
        assertEquals(Role.ERROR, role(c, f), "a failed snapshot write must stop the node");
    }

    /** A meter registry shared by a cluster's nodes. */
    private static final class SimMeters {
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    }
}
