package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The groups benchmark's bookkeeping: failover times, percentiles, the lost-write check, the group sample and the phases. */
class GroupsBenchLogicTest {

    private static final long MS = 1_000_000;

    @Test
    void failoverTimesCountFromTheKillToTheLeadersOwnRecordAndToTheFirstPollThatFindsEachVictimGroupLed() {
        long kill = 5_000 * MS;
        long killEpochMs = 1_700_000_000_000L;
        FailoverTimes t = new FailoverTimes(new int[]{9, 3, 7}, kill, killEpochMs);
        assertEquals(3, t.unresolved());
        // 1 and 4 were never the victim's; 3 has led since 30 ms after the kill, seen at 40 ms
        t.observe(List.of(1, 3, 4), List.of(killEpochMs - 9_000, killEpochMs + 30, killEpochMs + 35), kill + 40 * MS);
        // 3 again: its first times stay; 9 led since before the kill (the victim had just lost it) counts as 0
        t.observe(List.of(3, 9), List.of(killEpochMs + 60, killEpochMs - 5), kill + 65 * MS);
        assertEquals(1, t.unresolved());
        assertFalse(t.allLed());
        t.observe(List.of(7), List.of(killEpochMs + 900), kill + 1_500 * MS); // a busy survivor answered the poll late
        assertTrue(t.allLed());
        assertArrayEquals(new long[]{0, 30, 900}, t.sortedElectedMillis());
        assertArrayEquals(new long[]{40, 65, 1_500}, t.sortedSeenMillis());
        assertEquals(3, t.victimGroups());
        assertThrows(IllegalArgumentException.class, () -> t.observe(List.of(3), List.of(), kill), "one start per led group");
    }

    @Test
    void theStartIsPolledForLeadersAtAHundredthOfTheTimeSoFarWithinItsBounds() {
        assertEquals(100, GroupsBenchCluster.leaderPollMs(0), "at first, as often as the shortest pause allows");
        assertEquals(100, GroupsBenchCluster.leaderPollMs(9_999));
        assertEquals(250, GroupsBenchCluster.leaderPollMs(25_000), "25 s into a start: within 1 % of it");
        assertEquals(800, GroupsBenchCluster.leaderPollMs(80_000));
        assertEquals(1_000, GroupsBenchCluster.leaderPollMs(400_000), "never longer than the longest pause");
    }

    @Test
    void aVictimGroupListedTwiceIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FailoverTimes(new int[]{1, 2, 1}, 0, 0));
    }

    @Test
    void percentilesAreNearestRankWithUnresolvedGroupsCountedLongestOfAll() {
        long[] sorted = new long[100];
        for (int i = 0; i < 100; i++) {
            sorted[i] = i + 1; // 1..100
        }
        assertEquals(50, FailoverTimes.percentile(sorted, 0, 0.50));
        assertEquals(99, FailoverTimes.percentile(sorted, 0, 0.99));
        assertEquals(100, FailoverTimes.percentile(sorted, 0, 1.0));
        assertEquals(1, FailoverTimes.percentile(sorted, 0, 0.0));
        // one of 101 groups never led again: the 100th is still a time, the max is not
        assertEquals(100, FailoverTimes.percentile(sorted, 1, 0.99));
        assertEquals(-1, FailoverTimes.percentile(sorted, 1, 1.0));
        // two of 102: p99 (rank 101) falls among them
        assertEquals(-1, FailoverTimes.percentile(sorted, 2, 0.99));
        assertEquals(-1, FailoverTimes.percentile(new long[0], 0, 0.5));
        assertEquals(-1, FailoverTimes.percentile(new long[0], 3, 0.5));
    }

    @Test
    void theLostWriteCheckComparesEachGroupsGrowthWithItsCounts() {
        long u = LostWrites.UNREAD;
        long[] before = {10, 0, 5, 7, 0, u, 3};
        long[] after = {25, 4, 7, 13, 0, 9, 3};
        long[] acked = {15, 3, 3, 4, 0, 2, 0};
        long[] unknown = {0, 1, 0, 1, 0, 0, 0};
        long[] failed = {0, 0, 0, 0, 0, 0, 2};
        LostWrites.Verdict v = LostWrites.check(before, after, acked, unknown, failed);
        // group 0: exact; 1: acked + its unknown applied; 2: one acked increment missing (lost);
        // 3: grew 6 > 4 acked + 1 unknown (excess); 4: never written; 5: unread; 6: only failed ones, nothing applied
        assertEquals(new LostWrites.Verdict(6, 5, 1, 27, 2, 2, 1, 1, 1), v);
    }

    @Test
    void nothingLostWhenEveryAcknowledgedIncrementIsThereAndUnknownOnesMayOrMayNotBe() {
        LostWrites.Verdict v = LostWrites.check(new long[]{0, 100}, new long[]{5, 108}, new long[]{5, 6}, new long[]{0, 3}, new long[]{0, 0});
        assertEquals(0, v.lostGroups());
        assertEquals(0, v.lostIncrements());
        assertEquals(0, v.excessGroups());
        assertEquals(2, v.groupsChecked());
    }

    @Test
    void theSampleIsEveryGroupWhenFewOtherwiseDistinctRandomOnesSortedAndRepeatable() {
        assertArrayEquals(new int[]{0, 1, 2, 3, 4}, GroupSample.pick(5, 256, new Random(1)));
        int[] s = GroupSample.pick(100_000, 256, new Random(7));
        assertEquals(256, s.length);
        assertEquals(256, Arrays.stream(s).distinct().count());
        assertTrue(Arrays.stream(s).allMatch(g -> g >= 0 && g < 100_000));
        int[] sorted = s.clone();
        Arrays.sort(sorted);
        assertArrayEquals(sorted, s);
        assertArrayEquals(s, GroupSample.pick(100_000, 256, new Random(7)));
        assertEquals(List.of("0", "17"), GroupSample.ids(new int[]{0, 17}));
    }

    @Test
    void phasesParseCaseInsensitivelyAndAnUnknownOneIsAUsageErrorNamingIt() {
        assertEquals(Set.of(GroupsBenchCommand.Phase.IDLE, GroupsBenchCommand.Phase.KILL), GroupsBenchCommand.parsePhases(List.of("kill", " IDLE")));
        CliException e = assertThrows(CliException.class, () -> GroupsBenchCommand.parsePhases(List.of("idle", "crash")));
        assertEquals(CliException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("'crash'"), e.getMessage());
        assertThrows(CliException.class, () -> GroupsBenchCommand.parsePhases(List.of()));
    }
}
