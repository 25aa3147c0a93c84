package io.wheelraft.core.sim;

import io.wheelraft.core.CampaignSlots;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A process hosting many groups dies or is cut off, and the survivors bound how many of their
 * groups campaign at once ({@link CampaignSlots}): every group it led gets a new leader, the
 * groups wait their turn (the bound is reached and never passed), and election safety holds at
 * every simulated millisecond (checked by {@link SimGroups}).
 */
class CampaignSlotsSimulationTest {

    private static final int T = 200;
    private static final int GROUPS = 30;
    private static final int LIMIT = 3;

    private static SimGroups groups(long seed, int campaignLimit) {
        CommittedLog[] logs = new CommittedLog[GROUPS];
        for (int g = 0; g < GROUPS; g++) {
            logs[g] = new CommittedLog("group " + g + " seed " + seed);
        }
        return new SimGroups(seed, 3, GROUPS, 20, 100, campaignLimit, (g, i) -> new CounterFsm(i, logs[g]),
                o -> o.electionTimeoutMs(T).heartbeatDivisor(10).quiesceAfterMs(T));
    }

    @Test
    void aKilledProcessesGroupsFailOverInWavesWithinTheBound() {
        for (long seed = 1; seed <= 3; seed++) {
            failsOverWithinTheBound(seed, true);
        }
    }

    @Test
    void aCutOffProcessesGroupsFailOverInWavesWithinTheBound() {
        for (long seed = 11; seed <= 13; seed++) {
            failsOverWithinTheBound(seed, false);
        }
    }

    private static void failsOverWithinTheBound(long seed, boolean killed) {
        SimGroups s = groups(seed, LIMIT);
        assertTrue(s.runUntil(() -> s.groupsWithLeader() == GROUPS && s.quietMembers() == 3 * GROUPS, 60L * T),
                "not all led and quiet: " + s.groupsWithLeader() + " led; " + s.replayHint());
        int victim = s.busiestLeaderProcess();
        List<Integer> ledThere = s.groupsLedBy(victim);
        assertTrue(ledThere.size() > 2 * LIMIT, "the victim led only " + ledThere.size() + " groups; " + s.replayHint());
        List<Integer> survivors = new ArrayList<>(List.of(0, 1, 2));
        survivors.remove(Integer.valueOf(victim));
        long[] queuedBefore = {s.campaignSlots(survivors.get(0)).queued(), s.campaignSlots(survivors.get(1)).queued()};

        if (killed) {
            s.crashProcess(victim, true);
        } else {
            s.partition(List.of(victim), survivors);
        }

        assertTrue(s.runUntil(() -> ledThere.stream().allMatch(g -> survivors.contains(s.group(g).leaderIndex())), 60L * T),
                "not every group the victim led was led again: " + ledThere.stream().filter(g -> !survivors.contains(s.group(g).leaderIndex())).toList()
                        + "; " + s.replayHint());
        long waited = 0;
        for (int i = 0; i < 2; i++) {
            CampaignSlots slots = s.campaignSlots(survivors.get(i));
            assertTrue(slots.peakInUse() <= LIMIT, "process " + survivors.get(i) + " had " + slots.peakInUse()
                    + " groups campaigning at once; " + s.replayHint());
            waited += slots.queued() - queuedBefore[i];
        }
        assertTrue(waited > 0, "no group waited for a slot: the bound was never reached; " + s.replayHint());
        assertTrue(s.runUntil(() -> s.groupsWithLeader() == GROUPS && s.quietMembers() == 2 * GROUPS + (killed ? 0 : countQuietOn(s, victim)), 60L * T),
                "the groups did not settle on the survivors: " + s.quietMembers() + " quiet; " + s.replayHint());
        for (int i = 0; i < 2; i++) {
            CampaignSlots slots = s.campaignSlots(survivors.get(i));
            assertEquals(0, slots.inUse(), "a settled process still counts a campaign; " + s.replayHint());
            assertEquals(0, slots.inLine(), "a settled process still has groups in line; " + s.replayHint());
        }
    }

    /**
     * Groups waiting for a slot wait without work: a follower whose silent-leader turn has passed
     * while it waits in line, backs another candidate or runs its own pre-vote is not woken again
     * for that same turn. With messages taking 15-25 ms the failover runs in ten waves; each
     * failed-over group then costs a few dozen simulated tasks (its rounds, its first entry, the
     * answers), where a wake-up asked for a turn already past came back at every tick of the wheel
     * for as long as the group waited (hundreds of tasks per group).
     */
    @Test
    void groupsWaitingForASlotDoNotSpin() {
        for (long seed = 21; seed <= 23; seed++) {
            SimGroups s = groups(seed, LIMIT);
            assertTrue(s.runUntil(() -> s.groupsWithLeader() == GROUPS && s.quietMembers() == 3 * GROUPS, 60L * T),
                    "not all led and quiet: " + s.groupsWithLeader() + " led; " + s.replayHint());
            int victim = s.busiestLeaderProcess();
            List<Integer> ledThere = s.groupsLedBy(victim);
            List<Integer> survivors = new ArrayList<>(List.of(0, 1, 2));
            survivors.remove(Integer.valueOf(victim));
            s.runFor(5L * T); // quiet for a while: the followers' last contact with their leader is old
            s.faults().latencyMs(15, 25);
            long tasksBefore = s.tasksRun();

            s.crashProcess(victim, true);
            assertTrue(s.runUntil(() -> ledThere.stream().allMatch(g -> survivors.contains(s.group(g).leaderIndex())), 60L * T),
                    "not every group the victim led was led again; " + s.replayHint());

            long perGroup = (s.tasksRun() - tasksBefore) / ledThere.size();
            assertTrue(perGroup <= 80, "the failover ran " + perGroup + " simulated tasks per group the victim led ("
                    + ledThere.size() + " groups): waiting groups are being woken over and over; " + s.replayHint());
        }
    }

    private static int countQuietOn(SimGroups s, int process) {
        int n = 0;
        for (int g = 0; g < s.groupCount(); g++) {
            if (s.group(g).isUp(process) && s.group(g).node(process).isQuiet()) {
                n++;
            }
        }
        return n;
    }
}
