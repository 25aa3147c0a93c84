package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HashedWheelTimerManualClockTest {

    private final ManualClock clock = new ManualClock();
    private final HashedWheelTimer timer = HashedWheelTimer.builder()
            .clock(clock).tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(8).build();
    private final List<String> fired = new ArrayList<>();
    private final List<Long> firedAt = new ArrayList<>();

    @AfterEach
    void stopTimer() {
        timer.stop();
    }

    private TimerTask record(String name) {
        return t -> {
            fired.add(name);
            firedAt.add(clock.nanoTime());
        };
    }

    @Test
    void startsNoThreadAndFiresOnlyWhenTheClockAdvances() {
        timer.newTimeout(record("a"), 5, TimeUnit.MILLISECONDS);
        clock.advanceMillis(4);
        assertEquals(List.of(), fired);
        clock.advanceMillis(1);
        assertEquals(List.of("a"), fired);
        assertEquals(List.of(5_000_000L), firedAt);
    }

    @Test
    void firesTimeoutsInDeadlineOrderWithTiesInSchedulingOrder() {
        timer.newTimeout(record("c"), 30, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("a1"), 10, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("b"), 20, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("a2"), 10, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("early-in-tick"), 9_500, TimeUnit.MICROSECONDS);
        clock.advanceMillis(100);
        assertEquals(List.of("early-in-tick", "a1", "a2", "b", "c"), fired);
    }

    @Test
    void firesDeadlinesBeyondOneRevolutionAtTheirOwnTick() {
        // 8 slots of 1 ms: 3 ms and 11 ms and 19 ms share a slot.
        timer.newTimeout(record("19"), 19, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("3"), 3, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("11"), 11, TimeUnit.MILLISECONDS);
        clock.advanceMillis(3);
        assertEquals(List.of("3"), fired);
        clock.advanceMillis(7);
        assertEquals(List.of("3"), fired);
        clock.advanceMillis(1);
        assertEquals(List.of("3", "11"), fired);
        clock.advanceMillis(100);
        assertEquals(List.of("3", "11", "19"), fired);
        assertEquals(List.of(3_000_000L, 11_000_000L, 19_000_000L), firedAt);
    }

    @Test
    void firesWithinTheSameAdvanceWhatTasksScheduleWithNoDelay() {
        timer.newTimeout(t -> {
            fired.add("first");
            timer.newTimeout(record("second"), 0, TimeUnit.MILLISECONDS);
        }, 2, TimeUnit.MILLISECONDS);
        clock.advanceMillis(2);
        assertEquals(List.of("first", "second"), fired);
    }

    @Test
    void neverLosesADeadlineAlreadyInThePast() {
        clock.advanceMillis(50);
        timer.newTimeout(record("late"), -5, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("now"), 0, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertEquals(List.of("late", "now"), fired);
    }

    @Test
    void firesWhatIsDueWhenAdvancingToTheMiddleOfATick() {
        timer.newTimeout(record("a"), 300, TimeUnit.MICROSECONDS);
        clock.advance(500, TimeUnit.MICROSECONDS);
        assertEquals(List.of("a"), fired);
        assertEquals(500_000L, clock.nanoTime());
    }

    @Test
    void cancelledTimeoutNeverRunsAndIsReleasedAtOnce() {
        Timeout t = timer.newTimeout(record("x"), 5, TimeUnit.MILLISECONDS);
        assertEquals(1, timer.pendingTimeouts());
        assertTrue(t.cancel());
        assertTrue(t.isCancelled());
        assertFalse(t.cancel());
        assertEquals(0, timer.pendingTimeouts());
        clock.advanceMillis(10);
        assertEquals(List.of(), fired);
        assertFalse(t.isExpired());
    }

    @Test
    void expiredTimeoutCannotBeCancelled() {
        Timeout t = timer.newTimeout(record("x"), 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertTrue(t.isExpired());
        assertFalse(t.cancel());
        assertFalse(t.isCancelled());
    }

    @Test
    void taskCanCancelALaterTimeoutDueInTheSameTick() {
        Timeout[] later = new Timeout[1];
        timer.newTimeout(t -> later[0].cancel(), 100, TimeUnit.MICROSECONDS);
        later[0] = timer.newTimeout(record("later"), 200, TimeUnit.MICROSECONDS);
        clock.advanceMillis(1);
        assertEquals(List.of(), fired);
        assertTrue(later[0].isCancelled());
    }

    @Test
    void severalTimersOnOneClockFireInGlobalDeadlineOrder() {
        HashedWheelTimer other = HashedWheelTimer.builder().clock(clock).tickDuration(1, TimeUnit.MILLISECONDS).build();
        try {
            timer.newTimeout(record("t1@3"), 3, TimeUnit.MILLISECONDS);
            other.newTimeout(record("t2@2"), 2, TimeUnit.MILLISECONDS);
            other.newTimeout(record("t2@5"), 5, TimeUnit.MILLISECONDS);
            timer.newTimeout(record("t1@5"), 5, TimeUnit.MILLISECONDS);
            clock.advanceMillis(10);
            assertEquals(List.of("t2@2", "t1@3", "t1@5", "t2@5"), fired);
        } finally {
            other.stop();
        }
    }

    @Test
    void throwingTaskIsLoggedAndLaterTasksStillRun() {
        timer.newTimeout(t -> {
            throw new IllegalStateException("boom (expected by the test)");
        }, 1, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("after"), 2, TimeUnit.MILLISECONDS);
        clock.advanceMillis(5);
        assertEquals(List.of("after"), fired);
    }
}
