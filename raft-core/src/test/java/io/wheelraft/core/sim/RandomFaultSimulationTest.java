package io.wheelraft.core.sim;

import io.wheelraft.core.sim.linearizability.CheckResult;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.LinearizabilityChecker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many seeds of random crashes (kills and hangs), restarts, partitions, broken connections between
 * live nodes, message loss, duplication
 * and reordering on 3- and 5-node clusters under client load; in a third of them nodes also
 * snapshot every second and compact their logs, so lagging nodes catch up by InstallSnapshot. A third test adds disk faults
 * on at most a minority of the nodes at a time ({@link DiskFaults}). Each seed asserts: at most one
 * leader per term (checked every step by SimCluster), no applied entry ever differs between nodes
 * (CommittedLog), the client history is linearizable, and once every fault is healed a leader
 * emerges, commits, and every node converges.
 *
 * <p>{@code -Dwheelraft.sim.seeds=N} runs N seeds (default 500); {@code -Dwheelraft.sim.seed=S}
 * replays one.
 */
class RandomFaultSimulationTest {

    private static final int ELECTION_TIMEOUT_MS = 150;
    private static final int CHAOS_MS = 3_000;

    @Test
    void everySeedStaysSafeLinearizableAndLive() {
        runSeeds(500, false, false);
    }

    /**
     * The same faults plus disk faults on at most a minority of nodes at a time: a synced log
     * tail lost at restart, an entry that no longer reads back, failed log and meta writes, a
     * background storage failure, and the operator repairing a failed disk. No committed entry
     * may be lost, and once healed every node (the repaired ones too) converges.
     */
    @Test
    void diskFaultsOnAMinorityStaySafeLinearizableAndLive() {
        runSeeds(150, false, true);
    }

    /**
     * Seeds beyond the default count that once failed: a crashed follower's snapshot lane
     * published a snapshot it had finished receiving into the storage its next incarnation had
     * already opened with an older one, and that follower then refused every older snapshot its
     * leader sent and never caught up (found over 20,000 seeds, {@code -Dwheelraft.sim.seeds=20000}).
     */
    @Test
    void aHaltedNodePublishesNoSnapshotBehindItsNextIncarnation() {
        for (long seed : new long[] {2745, 2907}) {
            runSeed(seed, false, false);
        }
    }

    /**
     * A seed beyond the default count that once stalled after healing: the only node holding the
     * last committed entry had its pre-vote refused for its term alone (the others had moved on a
     * term) and then waited out an election timeout that its failed rounds had stretched eightfold,
     * longer than the test waits for a leader (found over 20,000 seeds).
     */
    @Test
    void theNodeWithTheLongestLogCampaignsAgainSoonAfterItsTermWasRefused() {
        runSeed(716, false, true);
    }

    /** Joint-consensus changes (adds, removes, the leader included) interleaved with the same faults. */
    @Test
    void membershipChangesUnderFaultsStaySafeLinearizableAndLive() {
        runSeeds(200, true, false);
    }

    /**
     * Membership changes and disk faults together: a damaged member may be removed, added back,
     * or be the one repaired while the configuration changes. One damaged member at a time and
     * never fewer than three voters, so every configuration keeps a sound majority (a fenced
     * majority waits for the operator by design, see docs/storage.md).
     */
    @Test
    void membershipChangesWithDiskFaultsStaySafeLinearizableAndLive() {
        runSeeds(150, true, true);
    }

    /**
     * A seed beyond the default count that once failed to converge: an old leader's
     * configuration entry adding a learner was cut from a follower's log by the next leader's
     * entries, and the follower, leader later, went on showing the cut configuration with a
     * learner it never replicated to (found over 6,000 seeds, {@code -Dwheelraft.sim.seeds=6000}).
     */
    @Test
    void aConfigurationCutFromTheLogIsNoLongerInEffect() {
        runSeed(2908, true, true);
    }

    private static void runSeeds(int defaultSeeds, boolean churn, boolean diskFaults) {
        SeedSweep.run("wheelraft.sim.seeds", defaultSeeds, seed -> runSeed(seed, churn, diskFaults));
    }

    static void runSeed(long seed, boolean churn, boolean diskFaults) {
        int size = churn ? 5 : seed % 2 == 0 ? 3 : 5;
        CommittedLog committed = new CommittedLog("seed " + seed);
        // A third of the seeds snapshot every (virtual) second and keep only 20 entries behind,
        // so crashed and partitioned nodes often catch up by InstallSnapshot, in several chunks.
        boolean snapshots = seed % 3 == 0;
        SimCluster c = new SimCluster(seed, size, churn ? 3 : size, i -> {
            CounterFsm fsm = new CounterFsm(i, committed);
            fsm.snapshotPadding = snapshots ? 100 : 0;
            return fsm;
        }, o -> {
            o.electionTimeoutMs(ELECTION_TIMEOUT_MS);
            if (seed % 3 == 1) {
                // Lease reads (a lease of min(T, grace/2) - drift = 10 ms here), checked by the
                // linearizability checker like ReadIndex reads.
                o.readOnlyOption(io.wheelraft.core.ReadOnlyOption.LEASE).leaseClockDriftMs(5);
            }
            if (snapshots) {
                o.snapshotIntervalSecs(1).snapshotLogMargin(20).snapshotChunkBytes(32);
            }
            if (seed % 4 == 2) {
                // Followers write sparse appends and every node applies on the thread that got
                // there, as the counter example runs: the same checks must hold.
                o.writeInline(true).applyInline(true);
            }
        });
        Random r = new Random(c.random().nextLong());
        CounterWorkload load = new CounterWorkload(c, 4, 4 * ELECTION_TIMEOUT_MS);
        long nextFault = 200;
        DiskFaults disks = null;
        if (diskFaults) {
            // With membership changes a minority depends on the configuration of the moment: one
            // damaged member at a time, and changeMembership keeps three voters.
            disks = churn ? new DiskFaults(c, 1, i -> true) : new DiskFaults(c);
        }
        for (int t = 0; t < CHAOS_MS; t++) {
            if (t == nextFault) {
                if (churn && r.nextInt(3) == 0) {
                    changeMembership(c, r, disks != null ? 3 : 2);
                } else if (disks != null && r.nextInt(3) == 0) {
                    disks.inject(r);
                } else {
                    injectFault(c, r);
                }
                nextFault = t + 50 + r.nextInt(400);
            }
            load.tick();
            c.runFor(1);
        }
        // Heal everything and demand progress.
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
            load.tick(); // keeps timing out operations whose node died
            return load.idle();
        }, 20L * ELECTION_TIMEOUT_MS), "clients still waiting after healing; " + c.replayHint());
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * ELECTION_TIMEOUT_MS), "no leader after healing; " + c.replayHint());
        // One write must commit. A leader elected just now may still be deposed (its closure then
        // fails with leadership lost), so retry on whoever leads, as a client would.
        boolean[] done = new boolean[1];
        boolean[] inFlight = new boolean[1];
        assertTrue(c.runUntil(() -> {
            int l = c.leaderIndex();
            if (!done[0] && !inFlight[0] && l >= 0) {
                inFlight[0] = true;
                c.node(l).apply(new io.wheelraft.core.Task(CounterFsm.delta(0), s -> {
                    done[0] = s.isOk();
                    inFlight[0] = false;
                }));
            }
            return done[0];
        }, 40L * ELECTION_TIMEOUT_MS), "a write after healing did not commit; " + c.replayHint());
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * ELECTION_TIMEOUT_MS), "leader lost after healing; " + c.replayHint());
        int leader = c.leaderIndex();
        long target = ((CounterFsm) c.stateMachine(leader)).lastAppliedIndex();
        // The members of the configuration in effect when the nodes have converged: a learner
        // that could not catch up in time is dropped by the leader meanwhile and need not converge.
        assertTrue(c.runUntil(() -> {
            int l = c.leaderIndex();
            return l >= 0 && allApplied(c, members(c, l), target);
        }, 20L * ELECTION_TIMEOUT_MS), "nodes did not converge to " + target + ": " + describe(c, members(c, leader)) + "; " + c.replayHint());
        leader = c.leaderIndex();
        List<Integer> members = members(c, leader);
        long value = ((CounterFsm) c.stateMachine(leader)).value();
        for (int i : members) {
            assertEquals(value, ((CounterFsm) c.stateMachine(i)).value(), "node " + i + " diverged; " + c.replayHint());
        }
        CheckResult<CounterModel.Input, Long> verdict = LinearizabilityChecker.check(CounterModel.INSTANCE, load.history(), CheckBudget.limit());
        assertTrue(verdict.isLinearizable(), "history of " + load.history().size() + " ops not linearizable: " + verdict + "; " + c.replayHint());
    }

    /** The members (voters and learners) of the leader's configuration. */
    private static List<Integer> members(SimCluster c, int leader) {
        var conf = c.node(leader).status().configuration();
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < c.size(); i++) {
            if (conf.containsAnywhere(c.peer(i))) {
                out.add(i);
            }
        }
        return out;
    }

    /**
     * Asks the current leader (if any) to add or remove a random member, keeping at least
     * {@code minVoters}; the outcome does not matter here.
     */
    private static void changeMembership(SimCluster c, Random r, int minVoters) {
        int leader = c.leaderIndex();
        if (leader < 0) {
            return;
        }
        int peer = r.nextInt(c.size());
        var conf = c.node(leader).status().configuration();
        if (conf.contains(c.peer(peer)) && conf.peers().size() > minVoters) {
            c.node(leader).removePeer(c.peer(peer), s -> { });
        } else {
            c.node(leader).addPeer(c.peer(peer), s -> { });
        }
    }

    private static String describe(SimCluster c, List<Integer> members) {
        StringBuilder b = new StringBuilder();
        for (int i : members) {
            var st = c.node(i).status();
            b.append(String.format("[n%d %s term=%d commit=%d applied=%d log=%d..%d conf=%s match=%s] ", i + 1, st.role(), st.term(),
                    st.commitIndex(), ((CounterFsm) c.stateMachine(i)).lastAppliedIndex(), st.firstLogIndex(), st.lastLogIndex(),
                    st.configuration(), st.followerMatchIndex()));
        }
        return b.toString();
    }

    private static boolean allApplied(SimCluster c, List<Integer> members, long index) {
        for (int i : members) {
            if (((CounterFsm) c.stateMachine(i)).lastAppliedIndex() < index) {
                return false;
            }
        }
        return true;
    }

    static void injectFault(SimCluster c, Random r) {
        int n = c.size();
        switch (r.nextInt(9)) {
            case 0, 1 -> {
                int victim = r.nextInt(n);
                if (downCount(c) <= n / 2) { // sometimes a majority is down: safety must hold, progress waits
                    c.crash(victim, r.nextBoolean());
                }
            }
            case 7 -> { // power loss: every process dies at once, losing every unsynced write, then restarts
                for (int i = 0; i < n; i++) {
                    c.crash(i, true);
                }
                for (int i = 0; i < n; i++) {
                    c.restart(i);
                }
            }
            case 2 -> {
                for (int i = 0; i < n; i++) {
                    if (!c.isUp(i)) {
                        c.restart(i);
                        break;
                    }
                }
            }
            case 3 -> {
                List<Integer> a = new ArrayList<>();
                List<Integer> b = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    (r.nextBoolean() ? a : b).add(i);
                }
                c.partition(a, b);
            }
            case 4 -> c.heal();
            case 8 -> { // a live connection breaks and heals at once: both ends hear of the break
                int a = r.nextInt(n);
                int b = (a + 1 + r.nextInt(n - 1)) % n;
                c.breakConnection(a, b);
            }
            case 5 -> c.faults().dropRate(r.nextInt(3) * 0.05).duplicateRate(r.nextInt(2) * 0.05);
            default -> c.faults().latencyMs(1, 1 + r.nextInt(15));
        }
    }

    private static int downCount(SimCluster c) {
        int d = 0;
        for (int i = 0; i < c.size(); i++) {
            if (!c.isUp(i)) {
                d++;
            }
        }
        return d;
    }
}
