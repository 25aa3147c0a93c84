package io.wheelraft.core.sim;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fresh groups on shared simulated processes ({@link SimGroups}) with the default fast first
 * election: every group is led well before an election timeout, by one candidacy (no split
 * vote, no second term), with the leaders spread over the processes; a designated first
 * candidate that is down or cut off does not keep its groups leaderless, the others elect at
 * their normal timeout. Election safety is checked at every simulated millisecond.
 */
class FastFirstElectionSimulationTest {

    private static final int T = 200;
    private static final int GROUPS = 30;

    private static SimGroups groups(long seed) {
        CommittedLog[] logs = new CommittedLog[GROUPS];
        for (int g = 0; g < GROUPS; g++) {
            logs[g] = new CommittedLog("group " + g + " seed " + seed);
        }
        return new SimGroups(seed, 3, GROUPS, (g, i) -> new CounterFsm(i, logs[g]), o -> o.electionTimeoutMs(T).heartbeatDivisor(10));
    }

    private static boolean allLed(SimGroups s) {
        return s.groupsWithLeader() == s.groupCount();
    }

    @Test
    void freshGroupsAreLedBeforeAnElectionTimeoutByOneCandidacyWithLeadersSpread() {
        for (long seed : new long[] {1, 2, 3}) {
            SimGroups s = groups(seed);
            assertTrue(s.runUntil(() -> allLed(s), T), "not every fresh group was led within one election timeout: "
                    + s.groupsWithLeader() + " of " + GROUPS + "; " + s.replayHint());
            int[] led = new int[3];
            for (int g = 0; g < GROUPS; g++) {
                SimCluster c = s.group(g);
                int leader = c.leaderIndex();
                led[leader]++;
                assertEquals(1, c.node(leader).status().term(), "group " + g + " needed more than one term; " + s.replayHint());
                for (int i = 0; i < 3; i++) {
                    assertEquals(c.peer(leader), c.metaStorage(i).votedFor(),
                            "member " + i + " of group " + g + " voted for another candidate (a split vote); " + s.replayHint());
                }
            }
            for (int i = 0; i < 3; i++) {
                assertTrue(led[i] >= GROUPS / 6, "process " + i + " leads only " + led[i] + " of " + GROUPS + " groups; " + s.replayHint());
            }
        }
    }

    @Test
    void groupsWhoseFirstCandidateIsDownAreLedByTheOthersAtTheirTimeout() {
        for (int down = 0; down < 3; down++) {
            SimGroups s = groups(10 + down);
            s.crashProcess(down, true);
            assertTrue(s.runUntil(() -> allLed(s), 6L * T), "with process " + down + " down from the start only "
                    + s.groupsWithLeader() + " of " + GROUPS + " groups were led; " + s.replayHint());
            s.restartProcess(down);
            s.runFor(3L * T);
            assertTrue(allLed(s), "a group lost its leader when the process came back; " + s.replayHint());
        }
    }

    @Test
    void groupsWhoseFirstCandidateIsCutOffAreLedAndStaySafeAfterTheHeal() {
        for (int k = 0; k < 3; k++) {
            int cut = k;
            SimGroups s = groups(20 + cut);
            List<Integer> others = cut == 0 ? List.of(1, 2) : cut == 1 ? List.of(0, 2) : List.of(0, 1);
            s.partition(List.of(cut), others);
            assertTrue(s.runUntil(() -> {
                for (int g = 0; g < GROUPS; g++) {
                    int leader = s.group(g).leaderIndex();
                    if (leader < 0 || leader == cut) {
                        return false;
                    }
                }
                return true;
            }, 6L * T), "with process " + cut + " cut off from the start not every group was led by the majority; " + s.replayHint());
            s.heal();
            s.runFor(5L * T);
            assertTrue(allLed(s), "groups leaderless after the heal: " + s.groupsWithLeader() + " of " + GROUPS + "; " + s.replayHint());
        }
    }
}
