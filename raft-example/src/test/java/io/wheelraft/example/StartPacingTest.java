package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** On a hand-driven clock: the sleeper advances it, and the awake counts are scripted per look. */
class StartPacingTest {

    private long clock;
    private final Deque<Integer> awakeCounts = new ArrayDeque<>();
    private int looks;

    private int forgotten;

    private StartPacing pacing(int limit, long stallMs) {
        return new StartPacing(limit, stallMs, 20, new StartPacing.AwakeGroups() {
            @Override
            public int count() {
                looks++;
                return awakeCounts.isEmpty() ? 0 : (awakeCounts.size() == 1 ? awakeCounts.peek() : awakeCounts.poll());
            }

            @Override
            public void forget() {
                forgotten++;
            }
        }, () -> clock, ms -> clock += ms);
    }

    @Test
    void countsOnlyEveryQuarterOfTheLimitAndGoesOnWhileBelowIt() throws Exception {
        StartPacing p = pacing(100, 1000);
        awakeCounts.add(99);
        for (int i = 0; i < 100; i++) {
            p.beforeStart();
        }
        assertEquals(4, looks, "one look per 25 starts");
        assertEquals(0, clock, "never waited");
    }

    @Test
    void atTheLimitWaitsUntilAQuarterWentQuiet() throws Exception {
        StartPacing p = pacing(100, 1000);
        awakeCounts.addAll(List.of(100, 90, 80, 76, 74));
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        assertEquals(5, looks);
        assertEquals(80, clock, "four polls of 20 ms");
        assertEquals(80, p.waitedMs());
        assertFalse(p.gaveUp());
    }

    @Test
    void aStalledWaveIsWrittenOffAndTheNextOneStarts() throws Exception {
        StartPacing p = pacing(100, 200);
        awakeCounts.addAll(List.of(120, 120)); // the first wave never gets fewer
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        assertEquals(200, clock, "waited out the stall time");
        assertEquals(1, forgotten, "the stalled wave's groups were forgotten");
        assertEquals(1, p.stalls());
        assertFalse(p.gaveUp(), "one stalled wave does not end the pacing");
        awakeCounts.clear();
        awakeCounts.addAll(List.of(100, 60)); // the next wave settles
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        assertEquals(220, clock, "paced the next wave: one poll until it settled");
        assertFalse(p.gaveUp());
    }

    @Test
    void stalledWavesInARowWithNoGroupGoingQuietEndThePacing() throws Exception {
        StartPacing p = pacing(100, 200);
        awakeCounts.add(120); // never fewer: the peers are down
        for (int i = 0; i < 25 * StartPacing.STALLS_TO_GIVE_UP; i++) {
            p.beforeStart();
        }
        assertTrue(p.gaveUp());
        assertEquals(200L * StartPacing.STALLS_TO_GIVE_UP, clock, "each wave waited the stall time");
        assertEquals(StartPacing.STALLS_TO_GIVE_UP, forgotten);
        int before = looks;
        for (int i = 0; i < 100; i++) {
            p.beforeStart();
        }
        assertEquals(before, looks, "no more counting once given up");
    }

    @Test
    void aStallAfterSomeProgressStartsTheCountOfStallsInARowAgain() throws Exception {
        StartPacing p = pacing(100, 100);
        awakeCounts.add(120); // wave 1: no progress at all
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        awakeCounts.clear();
        awakeCounts.addAll(List.of(120, 110)); // wave 2: one group went quiet, then nothing
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        awakeCounts.clear();
        awakeCounts.add(120); // wave 3: no progress; only the second in a row, as wave 2 progressed
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        assertEquals(3, p.stalls());
        assertFalse(p.gaveUp(), "a wave that made progress breaks the run of stalls");
    }

    @Test
    void progressRestartsTheStallTime() throws Exception {
        StartPacing p = pacing(100, 100);
        awakeCounts.addAll(List.of(100, 100, 100, 99, 99, 99, 99, 70)); // progress at 60 ms, done at 140 ms
        for (int i = 0; i < 25; i++) {
            p.beforeStart();
        }
        assertFalse(p.gaveUp());
        assertEquals(140, clock);
    }

    @Test
    void aTinyLimitIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> pacing(3, 100));
    }
}
