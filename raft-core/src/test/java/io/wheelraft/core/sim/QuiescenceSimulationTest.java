package io.wheelraft.core.sim;

import io.wheelraft.core.Task;
import io.wheelraft.core.sim.linearizability.CheckResult;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.LinearizabilityChecker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Quiet groups on shared simulated processes ({@link SimGroups}, each process hosting one member
 * of every group, a per-process liveness watch): settled groups go quiet and cost no timer and
 * no message; a write wakes only its group; a quiet follower whose leader's process dies or is
 * cut off wakes and elects a new leader; groups go quiet again with one process down; partitions
 * while quiet keep one leader per term. Election safety is checked at every simulated ms.
 */
class QuiescenceSimulationTest {

    static final int T = 200;
    private static final int HEARTBEAT_DIVISOR = 10;
    private static final int LIVENESS_INTERVAL_MS = 20;
    private static final int LIVENESS_SILENCE_MS = 100;

    static SimGroups groups(long seed, int count) {
        return groups(seed, count, 0);
    }

    /** {@code unservedAfterMs}: {@link io.wheelraft.core.NodeOptions#quiesceUnservedAfterMs} (0: its default, none; -1: one heartbeat interval). */
    private static SimGroups groups(long seed, int count, int unservedAfterMs) {
        CommittedLog[] logs = new CommittedLog[count];
        for (int g = 0; g < count; g++) {
            logs[g] = new CommittedLog("group " + g + " seed " + seed);
        }
        return new SimGroups(seed, 3, count, LIVENESS_INTERVAL_MS, LIVENESS_SILENCE_MS, (g, i) -> new CounterFsm(i, logs[g]),
                o -> o.electionTimeoutMs(T).heartbeatDivisor(HEARTBEAT_DIVISOR).quiesceAfterMs(T).quiesceUnservedAfterMs(unservedAfterMs));
    }

    /** {@code count} groups run until every member is quiet. */
    static SimGroups quietGroups(long seed, int count) {
        SimGroups s = groups(seed, count);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        return s;
    }

    /** Writes {@code delta} through group {@code g}'s leader and runs until it commits; returns that leader's index. */
    static int writeThroughLeader(SimGroups s, int g, long delta) {
        int leader = s.group(g).leaderIndex();
        boolean[] ok = new boolean[1];
        s.group(g).node(leader).apply(new Task(CounterFsm.delta(delta), st -> ok[0] = st.isOk()));
        assertTrue(s.runUntil(() -> ok[0], 5L * T), "write to a quiet group did not commit; " + s.replayHint());
        return leader;
    }

    static boolean allQuiet(SimGroups s, int liveProcesses) {
        return s.quietMembers() == s.groupCount() * liveProcesses;
    }

    @Test
    void settledGroupsGoQuietAndIdleCostDoesNotGrowWithGroups() {
        long[] pending = new long[2];
        int[] counts = {4, 24};
        for (int k = 0; k < counts.length; k++) {
            SimGroups s = groups(7, counts[k]);
            assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), "not every member went quiet: " + s.quietMembers() + "; " + s.replayHint());
            assertEquals(counts[k], s.groupsWithLeader(), "a quiet group keeps its leader");
            long sent = s.network().messagesSent();
            s.runFor(20L * T);
            assertEquals(sent, s.network().messagesSent(), "quiet groups sent Raft messages");
            assertTrue(allQuiet(s, 3), "a member woke up with nothing to do");
            assertEquals(counts[k], s.groupsWithLeader());
            pending[k] = s.pendingTimeouts();
        }
        // Only the process-level watch (and nothing per group) is left on the shared wheel.
        assertEquals(pending[0], pending[1], "wheel entries grew with the group count");
    }

    @Test
    void aWriteWakesOnlyItsGroupWhichGoesQuietAgain() {
        SimGroups s = quietGroups(11, 6);
        SimCluster g2 = s.group(2);
        int leader = writeThroughLeader(s, 2, 5);
        for (int g = 0; g < s.groupCount(); g++) {
            if (g != 2) {
                for (int i = 0; i < 3; i++) {
                    assertTrue(s.group(g).node(i).isQuiet(), "group " + g + " member " + i + " woke for another group's write");
                }
            }
        }
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 10L * T), "the written group did not go quiet again; " + s.replayHint());
        for (int i = 0; i < 3; i++) {
            assertEquals(5, ((CounterFsm) g2.stateMachine(i)).value(), "member " + i + " of the written group");
        }
        assertEquals(leader, g2.leaderIndex(), "the write changed the leader");
    }

    @Test
    void aLeadershipThatServedNothingGoesQuietWithoutWaitingTheFullTime() {
        for (long seed : new long[] {19, 23, 29}) {
            SimGroups unserved = groups(seed, 6);
            assertTrue(unserved.runUntil(() -> allQuiet(unserved, 3), 30L * T), unserved.replayHint());
            SimGroups fullWait = groups(seed, 6, T);
            assertTrue(fullWait.runUntil(() -> allQuiet(fullWait, 3), 30L * T), fullWait.replayHint());
            // Elections take about as long either way; the full wait adds T after each group settles.
            assertTrue(unserved.nowMs() + T / 2 <= fullWait.nowMs(), "seed " + seed + ": every group quiet after "
                    + unserved.nowMs() + " ms with the short wait and " + fullWait.nowMs() + " ms with the full one");
            assertEquals(6, unserved.groupsWithLeader());
        }
    }

    @Test
    void aLeaderGoesQuietOnItsFollowersLastQuietAnswerNotAtItsNextHeartbeat() {
        int heartbeatMs = T / HEARTBEAT_DIVISOR;
        for (long seed : new long[] {61, 67, 71}) {
            SimGroups s = groups(seed, 6);
            long[][] quietSince = new long[s.groupCount()][3]; // when each member last went quiet
            boolean[][] wasQuiet = new boolean[s.groupCount()][3];
            assertTrue(s.runUntil(() -> {
                for (int g = 0; g < s.groupCount(); g++) {
                    for (int i = 0; i < 3; i++) {
                        boolean q = s.group(g).node(i).isQuiet();
                        if (q && !wasQuiet[g][i]) {
                            quietSince[g][i] = s.nowMs();
                        }
                        wasQuiet[g][i] = q;
                    }
                }
                return allQuiet(s, 3);
            }, 30L * T), s.replayHint());
            for (int g = 0; g < s.groupCount(); g++) {
                int leader = s.group(g).leaderIndex();
                long lastFollower = 0;
                for (int i = 0; i < 3; i++) {
                    if (i != leader) {
                        lastFollower = Math.max(lastFollower, quietSince[g][i]);
                    }
                }
                // A follower goes quiet on the quiesce heartbeat; its answer takes one hop (1-3 ms
                // here) back. Waiting for the leader's next tick would take most of an interval.
                long lag = quietSince[g][leader] - lastFollower;
                assertTrue(lag >= 0 && lag < heartbeatMs / 2, "seed " + seed + ", group " + g + ": the leader went quiet " + lag
                        + " ms after its last follower (heartbeat interval " + heartbeatMs + " ms)");
            }
        }
    }

    @Test
    void aGroupThatServedAWriteWaitsTheFullTimeBeforeGoingQuietAgain() {
        SimGroups s = quietGroups(31, 4);
        SimCluster g1 = s.group(1);
        int leader = writeThroughLeader(s, 1, 3);
        long committedAt = s.nowMs();
        assertTrue(s.runUntil(() -> g1.node(leader).isQuiet(), 10L * T), "the written group did not go quiet again; " + s.replayHint());
        assertTrue(s.nowMs() - committedAt >= T, "the written group went quiet " + (s.nowMs() - committedAt)
                + " ms after its write committed, before the full wait of " + T + " ms");
    }

    @Test
    void aRestartedProcessFindsTheLeadersOfItsQuietGroupsBeforeItsElectionTimeout() {
        for (long seed : new long[] {37, 41, 43}) {
            SimGroups s = quietGroups(seed, 6);
            int victim = s.busiestLeaderProcess();
            List<Integer> ledByOthers = new ArrayList<>();
            for (int g = 0; g < s.groupCount(); g++) {
                if (!s.groupsLedBy(victim).contains(g)) {
                    ledByOthers.add(g);
                }
            }
            s.crashProcess(victim, true);
            assertTrue(s.runUntil(() -> allQuiet(s, 2) && s.groupsWithLeader() == s.groupCount(), 30L * T),
                    "the groups did not settle without the killed process; " + s.replayHint());
            s.restartProcess(victim);
            long restartedAt = s.nowMs();
            // Its members of groups led elsewhere hold the whole log, so their quiet leaders have
            // nothing to send them; each restarted member must ask. Its election timeout (T to 2T)
            // would come after this bound.
            assertTrue(s.runUntil(() -> allQuiet(s, 3), T), "seed " + seed + ": not every member quiet within " + T
                    + " ms of the restart: " + s.quietMembers() + " of " + 3 * s.groupCount() + "; " + s.replayHint());
            for (int g : ledByOthers) {
                assertTrue(s.group(g).leaderIndex() != victim, "group " + g + " changed its leader to the restarted process");
            }
            assertTrue(s.nowMs() - restartedAt < T);
        }
    }

    @Test
    void followersWokenByAPauseOfTheirLeadersProcessGoQuietAgainWhenItAnswersWithoutAnElection() {
        for (long seed : new long[] {47, 53, 59}) {
            SimGroups s = quietGroups(seed, 9);
            int paused = s.busiestLeaderProcess();
            List<Integer> ledThere = s.groupsLedBy(paused);
            List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
            others.remove(Integer.valueOf(paused));
            long[] terms = new long[s.groupCount()];
            for (int g = 0; g < s.groupCount(); g++) {
                terms[g] = s.group(g).node(paused).status().term();
            }
            s.partition(List.of(paused), others); // no reset: the others report it silent, as after a long pause
            assertTrue(s.runUntil(() -> ledThere.stream().allMatch(g -> others.stream().noneMatch(p -> s.group(g).node(p).isQuiet())), 3L * T),
                    "seed " + seed + ": the followers of the paused process's groups did not wake; " + s.replayHint());
            s.heal(); // back before their election timeout
            assertTrue(s.runUntil(() -> allQuiet(s, 3), T / 2), "seed " + seed + ": not quiet again within " + T / 2
                    + " ms of the pause's end: " + s.quietMembers() + " of " + 3 * s.groupCount() + "; " + s.replayHint());
            s.runFor(5L * T);
            for (int g = 0; g < s.groupCount(); g++) {
                assertEquals(paused == s.group(g).leaderIndex(), ledThere.contains(g), "seed " + seed + ": group " + g + " changed leader");
                assertEquals(terms[g], s.group(g).node(paused).status().term(), "seed " + seed + ": group " + g + " held an election");
            }
            assertTrue(allQuiet(s, 3));
        }
    }

    @Test
    void killedLeaderProcessQuietFollowersElectAndGoQuietAgainWithOneProcessDown() {
        checkLeaderProcessLost(13, true);
    }

    @Test
    void hungLeaderProcessIsNoticedBySilenceAlone() {
        checkLeaderProcessLost(17, false);
    }

    private static void checkLeaderProcessLost(long seed, boolean breakConnections) {
        SimGroups s = groups(seed, 8);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        long[] acked = writeToEveryGroup(s);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 10L * T), s.replayHint());
        int victim = s.busiestLeaderProcess();
        List<Integer> led = s.groupsLedBy(victim);
        long killedAt = s.nowMs();
        s.crashProcess(victim, breakConnections);
        long[] newLeaderAt = new long[s.groupCount()];
        assertTrue(s.runUntil(() -> {
            boolean all = true;
            for (int g : led) {
                int l = s.group(g).leaderIndex();
                if (l >= 0 && l != victim && newLeaderAt[g] == 0) {
                    newLeaderAt[g] = s.nowMs();
                }
                all &= newLeaderAt[g] != 0;
            }
            return all;
        }, 10L * T), "groups led by the lost process did not all elect; " + s.replayHint());
        // A reset is seen at once and the followers campaign by their turns; silence takes the
        // watch's window, then the followers treat the leader as a silent one (an election timeout).
        long bound = breakConnections ? 2L * T : LIVENESS_SILENCE_MS + LIVENESS_INTERVAL_MS + 2L * T;
        for (int g : led) {
            assertTrue(newLeaderAt[g] - killedAt <= bound, "group " + g + " took " + (newLeaderAt[g] - killedAt) + " ms; " + s.replayHint());
        }
        // Every group goes quiet again on the two live processes (TiKV's case: a down store must not keep groups awake).
        assertTrue(s.runUntil(() -> allQuiet(s, 2), 20L * T), "groups stayed awake with one process down: " + s.quietMembers()
                + " quiet; " + s.replayHint());
        assertEquals(s.groupCount(), s.groupsWithLeader());
        s.restartProcess(victim);
        assertTrue(s.runUntil(() -> allQuiet(s, 3) && allCaughtUp(s, acked), 30L * T), "restarted process not caught up and quiet; "
                + s.replayHint());
    }

    @Test
    void partitionWhileQuietElectsOnTheMajoritySideAndHealsToOneLeader() {
        SimGroups s = groups(19, 8);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        int isolated = s.busiestLeaderProcess();
        List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
        others.remove(Integer.valueOf(isolated));
        s.partition(List.of(isolated), others);
        assertTrue(s.runUntil(() -> {
            for (int g = 0; g < s.groupCount(); g++) {
                int l = s.group(g).leaderIndex();
                if (l < 0 || l == isolated) {
                    return false;
                }
            }
            return true;
        }, 20L * T), "the majority side did not lead every group; " + s.replayHint());
        // The isolated process wakes too (its followers were reported lost) and steps down on check-quorum.
        assertTrue(s.runUntil(() -> s.groupsLedBy(isolated).isEmpty(), 10L * T), "the isolated process still leads "
                + s.groupsLedBy(isolated) + "; " + s.replayHint());
        long[] acked = writeToEveryGroup(s);
        s.heal();
        assertTrue(s.runUntil(() -> allQuiet(s, 3) && allCaughtUp(s, acked), 40L * T), "not healed to quiet and caught up; " + s.replayHint());
    }

    /**
     * A process reported silent hosts a member of every group, but only the groups whose leader is
     * there (or a leader that no longer reaches a quorum) need to wake: the others keep their
     * leader, which still reaches a majority, and stay quiet on the two processes that see each other.
     */
    @Test
    void aSilentProcessWakesOnlyTheGroupsItLedOnTheOtherSide() {
        SimGroups s = groups(23, 9);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        int isolated = s.busiestLeaderProcess();
        List<Integer> ledThere = s.groupsLedBy(isolated);
        List<Integer> ledElsewhere = new ArrayList<>();
        for (int g = 0; g < s.groupCount(); g++) {
            if (!ledThere.contains(g)) {
                ledElsewhere.add(g);
            }
        }
        assertFalse(ledElsewhere.isEmpty(), "every group led by one process; " + s.replayHint());
        List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
        others.remove(Integer.valueOf(isolated));
        s.partition(List.of(isolated), others);

        assertTrue(s.runUntil(() -> ledThere.stream().allMatch(g -> others.contains(s.group(g).leaderIndex())), 20L * T),
                "the groups the silent process led were not led again on the other side; " + s.replayHint());
        for (int g : ledElsewhere) {
            for (int p : others) {
                assertTrue(s.group(g).node(p).isQuiet(), "group " + g + " woke on process " + p
                        + " though its leader kept a majority; " + s.replayHint());
            }
        }
        s.heal();
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 40L * T), "not quiet again after the partition healed: " + s.quietMembers()
                + "; " + s.replayHint());
        assertEquals(s.groupCount(), s.groupsWithLeader());
    }

    /**
     * A killed process (its connections reset) wakes only the groups it led: on the survivors, a
     * quiet group whose leader is alive and still reaches a quorum stays quiet. Waking every group
     * with a member on the dead process woke all groups of both survivors (every process hosts a
     * member of every group), and at 10,000 groups their heartbeats and elections swamped them.
     */
    @Test
    void aKilledProcessWakesOnlyTheGroupsItLed() {
        SimGroups s = groups(31, 9);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        int victim = s.busiestLeaderProcess();
        List<Integer> ledThere = s.groupsLedBy(victim);
        List<Integer> ledElsewhere = new ArrayList<>();
        for (int g = 0; g < s.groupCount(); g++) {
            if (!ledThere.contains(g)) {
                ledElsewhere.add(g);
            }
        }
        assertFalse(ledElsewhere.isEmpty(), "every group led by one process; " + s.replayHint());
        List<Integer> survivors = new ArrayList<>(List.of(0, 1, 2));
        survivors.remove(Integer.valueOf(victim));

        s.crashProcess(victim, true);
        s.runFor(LIVENESS_INTERVAL_MS);

        for (int g : ledElsewhere) {
            for (int p : survivors) {
                assertTrue(s.group(g).node(p).isQuiet(), "group " + g + " woke on process " + p
                        + " though its leader is alive and reaches a quorum; " + s.replayHint());
            }
        }
        assertTrue(s.runUntil(() -> ledThere.stream().allMatch(g -> survivors.contains(s.group(g).leaderIndex())), 10L * T),
                "the groups the killed process led were not led again; " + s.replayHint());
        assertTrue(s.runUntil(() -> allQuiet(s, 2), 20L * T), "not quiet again on the survivors: " + s.quietMembers()
                + "; " + s.replayHint());
        assertEquals(s.groupCount(), s.groupsWithLeader());
    }

    /**
     * After a kill, the groups that elected a new leader heartbeat until they settle without the
     * dead member and go quiet; the dead member, reported gone, gets a round only every quarter
     * election timeout instead of every heartbeat (each of those fails, and thousands of groups
     * send them at once after a real kill). Counted here: every request sent to the dead process
     * from the kill until all is quiet again, per group it led (their pre-votes and votes
     * included): 7 in this run, 14 when it got every heartbeat.
     */
    @Test
    void aKilledMemberGetsFewHeartbeatsWhileItsGroupsSettleWithoutIt() {
        SimGroups s = groups(37, 9);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        int victim = s.busiestLeaderProcess();
        List<Integer> ledThere = s.groupsLedBy(victim);
        String dead = s.group(0).peer(victim).endpoint();
        long before = s.network().requestsSentTo(dead);

        s.crashProcess(victim, true);
        assertTrue(s.runUntil(() -> allQuiet(s, 2) && s.groupsWithLeader() == s.groupCount(), 20L * T),
                "not led and quiet again on the survivors: " + s.quietMembers() + "; " + s.replayHint());

        long perGroup = (s.network().requestsSentTo(dead) - before) / ledThere.size();
        assertTrue(perGroup <= 10, perGroup + " requests per group it led went to the dead process ("
                + ledThere.size() + " groups); " + s.replayHint());
    }

    /**
     * Check-quorum counts a follower that answered this leader and whose process the liveness
     * watch still hears: a leader whose followers answer later than an election timeout (their
     * Raft work backed up, their transport still answering pings) keeps leading, where it used
     * to step down and set off another election. A follower process the watch loses no longer
     * counts, so a leader cut off from its followers still steps down.
     */
    @Test
    void aLeaderWhoseFollowersOnlyAnswerLateKeepsLeadingUntilTheirProcessesGoSilent() {
        SimGroups s = groups(29, 1);
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 30L * T), s.replayHint());
        SimCluster g = s.group(0);
        int leader = g.leaderIndex();
        long term = g.node(leader).status().term();
        List<Integer> followers = new ArrayList<>(List.of(0, 1, 2));
        followers.remove(Integer.valueOf(leader));
        for (int f : followers) {
            s.network().slowAnswersFrom(g.peer(f).endpoint(), 2 * T); // past the append deadline (one election timeout)
        }
        g.node(leader).apply(new Task(CounterFsm.delta(1), st -> { })); // wakes the group: check-quorum runs again
        s.runFor(10L * T);
        assertTrue(g.node(leader).isLeader(), "the leader stepped down though its followers' processes answer the watch; " + s.replayHint());
        assertEquals(term, g.node(leader).status().term(), "a new election ran; " + s.replayHint());

        s.partition(List.of(leader), followers);
        assertTrue(s.runUntil(() -> !g.node(leader).isLeader(), 10L * T),
                "a leader cut off from its followers' processes did not step down; " + s.replayHint());
        s.heal();
        for (int f : followers) {
            s.network().slowAnswersFrom(g.peer(f).endpoint(), 0);
        }
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 40L * T), "not quiet again after the partition healed; " + s.replayHint());
        assertEquals(1, s.groupsWithLeader());
    }

    /** {@code -Dwheelraft.quiet.seeds=N} runs N seeds instead of 4; {@code -Dwheelraft.sim.seed=S} replays one. */
    @Test
    void randomFaultsOnQuietGroupsStayLinearizable() {
        SeedSweep.run("wheelraft.quiet.seeds", 4, QuiescenceSimulationTest::runRandomFaults);
    }

    private static void runRandomFaults(long seed) {
        SimGroups s = groups(100 + seed, 5);
        Random r = new Random(seed);
        // Two groups carry client load; the other three mostly sit quiet between faults.
        List<CounterWorkload> loads = List.of(new CounterWorkload(s.group(0), 2, 4 * T), new CounterWorkload(s.group(1), 2, 4 * T));
        runLoadsThroughFaults(s, r, loads, true, () -> { });
        assertTrue(s.runUntil(() -> allQuiet(s, 3), 60L * T), "not all quiet after healing: " + s.quietMembers() + "; " + s.replayHint());
        for (int g = 0; g < 2; g++) {
            CheckResult<CounterModel.Input, Long> verdict = LinearizabilityChecker.check(CounterModel.INSTANCE, loads.get(g).history(),
                    CheckBudget.limit());
            assertTrue(verdict.isLinearizable(), "group " + g + " not linearizable: " + verdict + "; " + s.replayHint());
            SimCluster c = s.group(g);
            long value = ((CounterFsm) c.stateMachine(c.leaderIndex())).value();
            for (int i = 0; i < 3; i++) {
                assertEquals(value, ((CounterFsm) c.stateMachine(i)).value(), "group " + g + " member " + i + " diverged; " + s.replayHint());
            }
        }
    }

    /**
     * Runs {@code loads} for 80 T with a random fault every 2-8 T from 20 T on ({@code pauseLoads}:
     * sometimes let the loaded groups settle and go quiet too), calling {@code eachMs} after every
     * simulated ms; then heals everything, restarts every process, stops the loads and waits until
     * no client waits any more.
     */
    static void runLoadsThroughFaults(SimGroups s, Random r, List<CounterWorkload> loads, boolean pauseLoads, Runnable eachMs) {
        long nextFault = 20L * T;
        long end = 20L * T + 60L * T;
        boolean loadOn = true;
        for (long t = 0; t < end; t++) {
            if (t == nextFault) {
                injectFault(s, r);
                nextFault = t + 2L * T + r.nextInt(6 * T);
                loadOn = !pauseLoads || r.nextInt(3) > 0;
            }
            if (loadOn) {
                loads.forEach(CounterWorkload::tick);
            }
            s.runFor(1);
            eachMs.run();
        }
        s.heal();
        s.faults().dropRate(0);
        for (int i = 0; i < 3; i++) {
            s.restartProcess(i);
        }
        loads.forEach(CounterWorkload::stop);
        assertTrue(s.runUntil(() -> {
            loads.forEach(CounterWorkload::tick);
            return loads.stream().allMatch(CounterWorkload::idle);
        }, 40L * T), "clients still waiting; " + s.replayHint());
    }

    static void injectFault(SimGroups s, Random r) {
        switch (r.nextInt(6)) {
            case 0 -> s.crashProcess(r.nextInt(3), true);
            case 1 -> s.crashProcess(r.nextInt(3), false);
            case 2 -> s.restartProcess(r.nextInt(3));
            case 3 -> {
                int alone = r.nextInt(3);
                List<Integer> rest = new ArrayList<>(List.of(0, 1, 2));
                rest.remove(Integer.valueOf(alone));
                s.partition(List.of(alone), rest);
            }
            case 4 -> s.heal();
            default -> s.faults().dropRate(r.nextInt(2) == 0 ? 0 : 0.05);
        }
    }

    /** One increment per group, on its leader; returns each group's acknowledged total. */
    private static long[] writeToEveryGroup(SimGroups s) {
        long[] acked = new long[s.groupCount()];
        boolean[] done = new boolean[s.groupCount()];
        for (int g = 0; g < s.groupCount(); g++) {
            int gg = g;
            SimCluster c = s.group(g);
            c.node(c.leaderIndex()).apply(new Task(CounterFsm.delta(g + 1), st -> {
                if (st.isOk()) {
                    acked[gg] = gg + 1;
                    done[gg] = true;
                }
            }));
        }
        assertTrue(s.runUntil(() -> {
            for (boolean d : done) {
                if (!d) {
                    return false;
                }
            }
            return true;
        }, 10L * T), "writes did not commit; " + s.replayHint());
        return acked;
    }

    private static boolean allCaughtUp(SimGroups s, long[] acked) {
        for (int g = 0; g < s.groupCount(); g++) {
            for (int i = 0; i < 3; i++) {
                if (!s.group(g).isUp(i) || ((CounterFsm) s.group(g).stateMachine(i)).value() < acked[g]) {
                    return false;
                }
            }
        }
        return true;
    }
}
