package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ManualClockTest {

    @Test
    void startsAtZeroAndMovesOnlyWhenAdvanced() {
        ManualClock clock = new ManualClock();
        assertEquals(0, clock.nanoTime());
        clock.advanceMillis(3);
        clock.advance(5, TimeUnit.MICROSECONDS);
        assertEquals(3_005_000L, clock.nanoTime());
        assertEquals(3, clock.millis());
    }

    @Test
    void rejectsGoingBackNamingTheAmount() {
        ManualClock clock = new ManualClock();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> clock.advanceMillis(-7));
        assertTrue(e.getMessage().contains("-7"), e.getMessage());
        assertThrows(NullPointerException.class, () -> clock.advance(1, null));
    }

    @Test
    void saturatesInsteadOfOverflowing() {
        ManualClock clock = new ManualClock(Long.MAX_VALUE - 10);
        clock.advance(1, TimeUnit.DAYS);
        assertEquals(Long.MAX_VALUE, clock.nanoTime());
    }

    @Test
    void detectsATaskThatReschedulesItselfWithNoDelayForever() {
        ManualClock clock = new ManualClock();
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(clock).build();
        TimerTask[] again = new TimerTask[1];
        again[0] = t -> timer.newTimeout(again[0], 0, TimeUnit.MILLISECONDS);
        timer.newTimeout(again[0], 0, TimeUnit.MILLISECONDS);
        // 1.5 ms: the task fires at 0, 1 ms (next ticks), then keeps re-arming at 1.5 ms.
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> clock.advance(1500, TimeUnit.MICROSECONDS));
        assertTrue(e.getMessage().contains("rescheduling"), e.getMessage());
        timer.stop();
    }

    @Test
    void zeroDelayChainsAdvanceOneTickPerLink() {
        ManualClock clock = new ManualClock();
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(clock).tickDuration(1, TimeUnit.MILLISECONDS).build();
        List<Long> at = new ArrayList<>();
        TimerTask[] again = new TimerTask[1];
        again[0] = t -> {
            at.add(clock.nanoTime() / 1_000_000);
            if (at.size() < 5) {
                timer.newTimeout(again[0], 0, TimeUnit.MILLISECONDS);
            }
        };
        timer.newTimeout(again[0], 0, TimeUnit.MILLISECONDS);
        clock.advanceMillis(10);
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), at);
        timer.stop();
    }
}
