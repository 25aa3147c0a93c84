package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HierarchicalWheelTimerContractTest extends TimerContractTest {

    @Override
    Timer newTimer(ManualClock clock) {
        // 4 buckets of 1 ms per level: most tests cascade through several levels.
        return HierarchicalWheelTimer.builder().drivenBy(clock).tickDuration(1, TimeUnit.MILLISECONDS).wheelSize(4).build();
    }

    @Override
    Timer newRealTimer() {
        return HierarchicalWheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).wheelSize(4).build();
    }

    @Override
    long pending(Timer timer) {
        return ((HierarchicalWheelTimer) timer).pendingTimeouts();
    }

    @Test
    void createsOverflowLevelsOnDemandAndCascadesDown() {
        HierarchicalWheelTimer h = (HierarchicalWheelTimer) timer;
        assertEquals(1, h.levels());
        timer.newTimeout(record("3"), 3, TimeUnit.MILLISECONDS);
        assertEquals(1, h.levels());
        timer.newTimeout(record("100"), 100, TimeUnit.MILLISECONDS); // 4, 16, 64, 256 ms levels
        assertEquals(4, h.levels());
        clock.advanceMillis(99);
        assertEquals(List.of("3"), fired);
        clock.advanceMillis(1);
        assertEquals(List.of("3", "100"), fired);
        assertEquals(List.of(3_000_000L, 100_000_000L), firedAt);
    }

    @Test
    void jumpsStraightToTheNextNonEmptyBucket() {
        // One timeout an hour out with 1 ms ticks: a tick-by-tick wheel would do 3.6 million
        // steps; buckets in a delay queue need one per level on the way down.
        HierarchicalWheelTimer h = (HierarchicalWheelTimer) timer;
        timer.newTimeout(record("hour"), 1, TimeUnit.HOURS);
        int levels = h.levels();
        clock.advance(2, TimeUnit.HOURS);
        assertEquals(List.of("hour"), fired);
        assertTrue(h.bucketsProcessed() <= levels, "processed " + h.bucketsProcessed() + " buckets for " + levels + " levels");
    }
}
