package io.wheelraft.core.sim;

import io.wheelraft.core.Status;
import io.wheelraft.core.sim.linearizability.CheckResult;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.LinearizabilityChecker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.wheelraft.core.sim.QuiescenceSimulationTest.T;
import static io.wheelraft.core.sim.QuiescenceSimulationTest.allQuiet;
import static io.wheelraft.core.sim.QuiescenceSimulationTest.groups;
import static io.wheelraft.core.sim.QuiescenceSimulationTest.runLoadsThroughFaults;
import static io.wheelraft.core.sim.QuiescenceSimulationTest.quietGroups;
import static io.wheelraft.core.sim.QuiescenceSimulationTest.writeThroughLeader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Linearizable reads on quiet groups ({@link SimGroups}, one member of every group per process):
 * a read on a quiet leader, or on a quiet follower that asks it, is confirmed by one round of
 * quiesce heartbeats and leaves every member quiet; a round without a quorum in time wakes the
 * leader, which confirms the read with its ordinary heartbeats; a quiet leader cut off from its
 * followers never confirms one; and reads on groups that are quiet between rare writes stay
 * linearizable through process crashes, restarts, partitions and lost messages.
 */
class QuietReadSimulationTest {

    /** A read's outcome as its closure saw it: the status, and the counter's value when it ran. */
    private static final class Outcome {
        Status status;
        long value = -1;
    }

    private static Outcome read(SimCluster group, int member) {
        Outcome o = new Outcome();
        CounterFsm fsm = (CounterFsm) group.stateMachine(member);
        group.node(member).readIndex((status, index) -> {
            o.status = status;
            o.value = status.isOk() ? fsm.value() : -1;
        });
        return o;
    }

    @Test
    void aReadOnAQuietGroupIsConfirmedWithoutWakingAnyMember() {
        SimGroups s = quietGroups(37, 4);
        SimCluster g1 = s.group(1);
        int leader = writeThroughLeader(s, 1, 4);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 10L * T), "not quiet after the write; " + s.replayHint());
        s.runFor(5L * T); // cancelled timers leave the wheel as it turns past them
        long timeoutsWhenQuiet = s.pendingTimeouts();
        int follower = (leader + 1) % 3;
        for (int member : new int[] {leader, follower}) {
            Outcome o = read(g1, member);
            boolean[] woke = {false};
            assertTrue(s.runUntil(() -> {
                woke[0] |= !allQuiet(s, 3);
                return o.status != null;
            }, 2L * T), "the read on member " + member + " did not finish; " + s.replayHint());
            assertTrue(o.status.isOk(), "read on member " + member + ": " + o.status + "; " + s.replayHint());
            assertEquals(4, o.value, "read on member " + member);
            assertFalse(woke[0], "the read on member " + member + " woke a member; " + s.replayHint());
        }
        long sent = s.network().messagesSent();
        s.runFor(5L * T);
        assertEquals(sent, s.network().messagesSent(), "the group went on sending after its reads; " + s.replayHint());
        assertEquals(timeoutsWhenQuiet, s.pendingTimeouts(), "the reads left timers on the wheel");
        assertEquals(leader, g1.leaderIndex(), "the reads changed the leader");
    }

    @Test
    void aQuietReadWithoutAQuorumInTimeWakesTheLeaderWhoseHeartbeatsConfirmIt() {
        SimGroups s = quietGroups(41, 2);
        SimCluster g0 = s.group(0);
        int leader = writeThroughLeader(s, 0, 6);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 10L * T), s.replayHint());
        List<Integer> followers = followersOf(leader);
        for (int f : followers) {
            s.network().slowAnswersFrom(g0.peer(f).endpoint(), T / 2); // past the quiet round's wait of T/4
        }
        Outcome o = read(g0, leader);
        boolean[] leaderWoke = {false};
        assertTrue(s.runUntil(() -> {
            leaderWoke[0] |= !g0.node(leader).isQuiet();
            return o.status != null;
        }, 4L * T), "the read did not finish; " + s.replayHint());
        assertTrue(o.status.isOk(), o.status + "; " + s.replayHint());
        assertEquals(6, o.value);
        assertTrue(leaderWoke[0], "the read was confirmed before any answer could arrive; " + s.replayHint());
        for (int f : followers) {
            s.network().slowAnswersFrom(g0.peer(f).endpoint(), 0);
        }
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 20L * T), "not quiet again after the read; " + s.replayHint());
        assertEquals(leader, g0.leaderIndex());
    }

    @Test
    void aQuietLeaderCutOffFromItsFollowersConfirmsNoRead() {
        for (long seed : new long[] {43, 47, 53}) {
            SimGroups s = quietGroups(seed, 3);
            SimCluster g2 = s.group(2);
            int oldLeader = writeThroughLeader(s, 2, 2);
            assertTrue(s.runUntil(() -> allQuiet(s, 3), 10L * T), s.replayHint());
            List<Integer> followers = followersOf(oldLeader);
            s.partition(List.of(oldLeader), followers);
            Outcome stale = read(g2, oldLeader);
            // The majority's side elects a leader and takes a write the cut-off leader never sees.
            assertTrue(s.runUntil(() -> followers.contains(g2.leaderIndex()), 20L * T), "no leader on the majority's side; " + s.replayHint());
            int newLeader = g2.leaderIndex();
            writeThroughLeader(s, 2, 3);
            assertTrue(s.runUntil(() -> stale.status != null, 20L * T), "the cut-off leader's read never finished; " + s.replayHint());
            assertFalse(stale.status.isOk(), "seed " + seed + ": a leader cut off from its followers confirmed a read (value "
                    + stale.value + ") while " + newLeader + " led; " + s.replayHint());
            s.heal();
            assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), "not quiet again after healing; " + s.replayHint());
            Outcome fresh = read(g2, oldLeader); // a follower now: it asks the leader
            assertTrue(s.runUntil(() -> fresh.status != null, 5L * T), "the read after healing did not finish; " + s.replayHint());
            assertTrue(fresh.status.isOk(), fresh.status + "; " + s.replayHint());
            assertEquals(5, fresh.value, "seed " + seed + ": the old leader's read after healing");
        }
    }

    @Test
    void readsOnGroupsQuietBetweenRareWritesStayLinearizableUnderFaults() {
        for (long seed = 1; seed <= 4; seed++) {
            runReadMostlyFaults(seed);
        }
    }

    private static void runReadMostlyFaults(long seed) {
        SimGroups s = groups(200 + seed, 4);
        Random r = new Random(seed);
        // One write in 200 operations, about one every 8 T: each group goes quiet between writes
        // (T after the last one) and is read while quiet.
        List<CounterWorkload> loads = new ArrayList<>();
        for (int g = 0; g < 3; g++) {
            loads.add(CounterWorkload.readMostly(s.group(g), 2, 4 * T, 200));
        }
        // Moments when group 0 had an operation in flight (a read: a write wakes the group) and
        // every member quiet: the loads did read quiet groups.
        int[] quietReadsSeen = {0};
        runLoadsThroughFaults(s, r, loads, false, () -> {
            if (!loads.get(0).idle() && groupQuiet(s.group(0))) {
                quietReadsSeen[0]++;
            }
        });
        assertTrue(quietReadsSeen[0] > 0, "seed " + seed + ": group 0 was never read while quiet; " + s.replayHint());
        for (int g = 0; g < loads.size(); g++) {
            CounterWorkload load = loads.get(g);
            CheckResult<CounterModel.Input, Long> verdict = LinearizabilityChecker.check(CounterModel.INSTANCE, load.history(),
                    CheckBudget.limit());
            assertTrue(verdict.isLinearizable(), "seed " + seed + ", group " + g + " not linearizable: " + verdict + "; " + s.replayHint());
            assertTrue(load.acknowledged() > 0, "seed " + seed + ", group " + g + ": no operation acknowledged");
        }
    }

    private static boolean groupQuiet(SimCluster group) {
        for (int i = 0; i < group.size(); i++) {
            if (!group.isUp(i) || !group.node(i).isQuiet()) {
                return false;
            }
        }
        return true;
    }

    private static List<Integer> followersOf(int leader) {
        List<Integer> followers = new ArrayList<>(List.of(0, 1, 2));
        followers.remove(Integer.valueOf(leader));
        return followers;
    }
}
