package io.wheelraft.core.sim;

import io.wheelraft.core.Role;
import io.wheelraft.core.Task;
import io.wheelraft.core.sim.linearizability.CheckResult;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.LinearizabilityChecker;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random faults on clusters with a witness: two data members and a witness (even seeds), or four
 * data members and a witness (odd seeds); crashes (kills and hangs), power losses, restarts,
 * partitions, broken connections, lost, duplicated and reordered messages, under client load; in
 * a third of the seeds nodes snapshot every second and compact, so the witness catches up by
 * metadata-only snapshots. Each seed asserts: at most one leader per term (SimCluster, every
 * step), the witness never leads or campaigns, no applied entry differs between data members
 * (CommittedLog), the history is linearizable (no acknowledged write lost), and once healed a
 * leader emerges, commits, and every member converges, the witness's log included.
 *
 * <p>{@code -Dwheelraft.sim.witnessSeeds=N} runs N seeds (default 40); {@code -Dwheelraft.sim.seed=S}
 * replays one.
 */
class WitnessRandomFaultSimulationTest {

    private static final int T = 150;
    private static final int CHAOS_MS = 3_000;

    @Test
    void everySeedWithAWitnessStaysSafeLinearizableAndLive() {
        SeedSweep.run("wheelraft.sim.witnessSeeds", 40, seed -> runSeed(seed, false));
    }

    /**
     * The same faults plus disk faults ({@link DiskFaults}): the witness's metadata and entry
     * headers are what its votes and acknowledgements rest on, so a damaged witness must be
     * fenced and repaired like a data member. One damaged member at a time: with two data
     * members only the witness (an entry the witness and one data member acknowledged has that
     * member's copy alone, so damaging it leaves the group waiting for the operator, safely), with
     * four any member.
     */
    @Test
    void diskFaultsWithAWitnessStaySafeLinearizableAndLive() {
        SeedSweep.run("wheelraft.sim.witnessSeeds", 40, seed -> runSeed(seed, true));
    }

    private static void runSeed(long seed, boolean diskFaults) {
        int size = seed % 2 == 0 ? 3 : 5;
        int witness = size - 1;
        CommittedLog committed = new CommittedLog("seed " + seed);
        boolean snapshots = seed % 3 == 0;
        SimCluster c = new SimCluster(seed, size, size, Set.of(witness), i -> {
            if (i == witness) {
                return null; // a witness runs without a state machine
            }
            CounterFsm fsm = new CounterFsm(i, committed);
            fsm.snapshotPadding = snapshots ? 100 : 0;
            return fsm;
        }, o -> {
            o.electionTimeoutMs(T);
            if (seed % 3 == 1) {
                o.readOnlyOption(io.wheelraft.core.ReadOnlyOption.LEASE).leaseClockDriftMs(5);
            }
            if (snapshots) {
                o.snapshotIntervalSecs(1).snapshotLogMargin(20).snapshotChunkBytes(32);
            }
        }, null);
        Random r = new Random(c.random().nextLong());
        CounterWorkload load = new CounterWorkload(c, 4, 4 * T);
        long nextFault = 200;
        DiskFaults disks = diskFaults ? new DiskFaults(c, 1, i -> size == 5 || i == witness) : null;
        for (int t = 0; t < CHAOS_MS; t++) {
            if (t == nextFault) {
                if (disks != null && r.nextInt(3) == 0) {
                    disks.inject(r);
                } else {
                    RandomFaultSimulationTest.injectFault(c, r);
                }
                nextFault = t + 50 + r.nextInt(400);
            }
            load.tick();
            c.runFor(1);
            if (c.isUp(witness)) {
                Role role = c.node(witness).status().role();
                assertNotEquals(Role.LEADER, role, "the witness leads; " + c.replayHint());
                assertNotEquals(Role.CANDIDATE, role, "the witness campaigns; " + c.replayHint());
            }
        }
        c.heal();
        c.faults().dropRate(0).duplicateRate(0).latencyMs(1, 3);
        if (disks != null) {
            disks.repairAll();
        }
        for (int i = 0; i < size; i++) {
            c.restart(i);
        }
        load.stop();
        assertTrue(c.runUntil(() -> {
            load.tick();
            return load.idle();
        }, 20L * T), "clients still waiting after healing; " + c.replayHint());
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "no leader after healing; " + c.replayHint());
        boolean[] done = new boolean[1];
        boolean[] inFlight = new boolean[1];
        assertTrue(c.runUntil(() -> {
            int l = c.leaderIndex();
            if (!done[0] && !inFlight[0] && l >= 0) {
                inFlight[0] = true;
                c.node(l).apply(new Task(CounterFsm.delta(0), s -> {
                    done[0] = s.isOk();
                    inFlight[0] = false;
                }));
            }
            return done[0];
        }, 40L * T), "a write after healing did not commit; " + c.replayHint());
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), "leader lost after healing; " + c.replayHint());
        long target = ((CounterFsm) c.stateMachine(c.leaderIndex())).lastAppliedIndex();
        assertTrue(c.runUntil(() -> converged(c, witness, target), 20L * T), "members did not converge to " + target + "; " + c.replayHint());
        int leader = c.leaderIndex();
        assertNotEquals(witness, leader);
        long value = ((CounterFsm) c.stateMachine(leader)).value();
        for (int i = 0; i < size; i++) {
            if (i != witness) {
                assertEquals(value, ((CounterFsm) c.stateMachine(i)).value(), "data member " + i + " diverged; " + c.replayHint());
            }
        }
        assertEquals(0, c.network().voteRequestsSentBy(c.peer(witness).endpoint()), "the witness asked for votes; " + c.replayHint());
        CheckResult<CounterModel.Input, Long> verdict = LinearizabilityChecker.check(CounterModel.INSTANCE, load.history(), CheckBudget.limit());
        assertTrue(verdict.isLinearizable(), "history of " + load.history().size() + " ops not linearizable: " + verdict + "; " + c.replayHint());
    }

    /** Every data member applied up to {@code index}, and the witness's log and applied index reached it. */
    private static boolean converged(SimCluster c, int witness, long index) {
        for (int i = 0; i < c.size(); i++) {
            if (i == witness ? c.node(i).status().appliedIndex() < index : ((CounterFsm) c.stateMachine(i)).lastAppliedIndex() < index) {
                return false;
            }
        }
        return true;
    }
}
