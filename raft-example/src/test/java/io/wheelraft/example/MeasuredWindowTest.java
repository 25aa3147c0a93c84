package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench}'s window counts as raft-bench's ClosedLoopLoad does: acknowledgements inside the
 * window count towards ops/s whenever they started, latencies only of increments that started
 * inside it too, and nothing from the warm-up or after the window's fixed end.
 */
class MeasuredWindowTest {

    private static final long S = 1_000_000_000L;
    private static final long FROM = 100 * S;
    private static final long UNTIL = FROM + 2 * S;

    @Test
    void countsAcknowledgementsInsideTheWindowOverItsNominalLength() {
        MeasuredWindow w = new MeasuredWindow(2, FROM, UNTIL, true);
        w.acknowledged(0, FROM - 5 * S, FROM - 1);          // warm-up: not counted
        w.acknowledged(0, FROM - 1_000, FROM + 1_000);      // straddles the start: counted, latency not kept
        w.acknowledged(1, FROM, FROM + 3_000);              // inside
        w.acknowledged(1, FROM + S, UNTIL);                 // ends exactly at the end: inside
        w.acknowledged(0, UNTIL - 1_000, UNTIL + 1);        // after the end: not counted
        assertEquals(3, w.acknowledged());
        assertEquals(1.5, w.opsPerSecond(), 1e-9, "3 over the 2 s window");
        assertArrayEquals(new long[] {3_000, S}, w.sortedLatencies());
    }

    @Test
    void latenciesFromEverySlotComeBackSorted() {
        MeasuredWindow w = new MeasuredWindow(3, FROM, UNTIL, true);
        for (int i = 0; i < 3000; i++) {
            int slot = i % 3;
            w.acknowledged(slot, FROM + i, FROM + i + (3000 - i) * 10L);
        }
        long[] lat = w.sortedLatencies();
        assertEquals(3000, lat.length);
        assertEquals(10, lat[0]);
        assertEquals(30_000, lat[2999]);
        for (int i = 1; i < lat.length; i++) {
            assertTrue(lat[i - 1] <= lat[i], "sorted at " + i);
        }
    }

    @Test
    void withoutLatenciesItStillCounts() {
        MeasuredWindow w = new MeasuredWindow(1, FROM, UNTIL, false);
        w.acknowledged(0, FROM, FROM + 10);
        assertEquals(1, w.acknowledged());
        assertEquals(0, w.sortedLatencies().length);
    }

    @Test
    void anEmptyWindowIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new MeasuredWindow(1, FROM, FROM, true));
        assertThrows(IllegalArgumentException.class, () -> new MeasuredWindow(0, FROM, UNTIL, true));
    }
}
