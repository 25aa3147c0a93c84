package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RepeatedTimerTest {

    private final ManualClock clock = new ManualClock();
    private final HashedWheelTimer wheel = HashedWheelTimer.builder()
            .drivenBy(clock).tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(64).build();

    @AfterEach
    void stopWheel() {
        wheel.stop();
    }

    /** Records the clock (in ms) at every trigger. */
    private class Recording extends RepeatedTimer {
        final List<Long> triggers = new ArrayList<>();
        final AtomicInteger destroyed = new AtomicInteger();
        Runnable duringTrigger = () -> { };

        Recording(int timeoutMs) {
            super("rec", timeoutMs, wheel);
        }

        @Override
        protected void onTrigger() {
            triggers.add(clock.nanoTime() / 1_000_000);
            duringTrigger.run();
        }

        @Override
        protected void onDestroy() {
            destroyed.incrementAndGet();
        }
    }

    @Test
    void repeatsEveryPeriodOnceStarted() {
        Recording r = new Recording(10);
        assertFalse(r.isRunning());
        clock.advanceMillis(30);
        assertEquals(List.of(), r.triggers);
        r.start();
        r.start(); // no-op
        assertTrue(r.isRunning());
        clock.advanceMillis(35);
        assertEquals(List.of(40L, 50L, 60L), r.triggers);
    }

    @Test
    void stopPreventsFurtherRunsAndStartResumes() {
        Recording r = new Recording(10);
        r.start();
        clock.advanceMillis(10);
        r.stop();
        clock.advanceMillis(50);
        assertEquals(List.of(10L), r.triggers);
        r.start();
        clock.advanceMillis(10);
        assertEquals(List.of(10L, 70L), r.triggers);
    }

    @Test
    void stopFromInsideOnTriggerPreventsTheNextRun() {
        Recording r = new Recording(10);
        r.duringTrigger = r::stop;
        r.start();
        clock.advanceMillis(100);
        assertEquals(List.of(10L), r.triggers);
        assertFalse(r.isRunning());
        assertEquals(0, wheel.pendingTimeouts());
    }

    @Test
    void throwingOnTriggerKeepsRepeating() {
        Recording r = new Recording(10);
        r.duringTrigger = () -> {
            throw new IllegalStateException("boom (expected by the test)");
        };
        r.start();
        clock.advanceMillis(30);
        assertEquals(List.of(10L, 20L, 30L), r.triggers);
    }

    @Test
    void resetChangesThePeriodAndRestartsTheCountdown() {
        Recording r = new Recording(10);
        r.start();
        clock.advanceMillis(5);
        r.reset(20);
        clock.advanceMillis(50);
        assertEquals(List.of(25L, 45L), r.triggers);
        assertEquals(20, r.timeoutMs());
    }

    @Test
    void resetWhileStoppedOnlyChangesThePeriod() {
        Recording r = new Recording(10);
        r.reset(30);
        clock.advanceMillis(100);
        assertEquals(List.of(), r.triggers);
        r.start();
        clock.advanceMillis(30);
        assertEquals(List.of(130L), r.triggers);
    }

    @Test
    void restartArmsAFreshPeriod() {
        Recording r = new Recording(10);
        r.start();
        clock.advanceMillis(8);
        r.restart();
        clock.advanceMillis(10);
        assertEquals(List.of(18L), r.triggers);
    }

    @Test
    void runOnceNowTriggersImmediatelyAndRearms() {
        Recording r = new Recording(10);
        r.start();
        clock.advanceMillis(4);
        r.runOnceNow();
        assertEquals(List.of(4L), r.triggers);
        clock.advanceMillis(10);
        assertEquals(List.of(4L, 14L), r.triggers);
        assertEquals(1, wheel.pendingTimeouts());
    }

    @Test
    void runOnceNowDoesNothingWhenStopped() {
        Recording r = new Recording(10);
        r.runOnceNow();
        assertEquals(List.of(), r.triggers);
    }

    @Test
    void destroyCallsOnDestroyOnceAndStopsForGood() {
        Recording r = new Recording(10);
        r.start();
        r.destroy();
        r.destroy();
        r.start();
        r.restart();
        clock.advanceMillis(100);
        assertEquals(List.of(), r.triggers);
        assertEquals(1, r.destroyed.get());
        assertEquals(0, wheel.pendingTimeouts());
    }

    @Test
    void destroyFromInsideOnTriggerNotifiesAfterTheRunFinishes() {
        Recording r = new Recording(10);
        List<String> events = new ArrayList<>();
        r.duringTrigger = () -> {
            r.destroy();
            events.add("destroy returned, destroyed=" + r.destroyed.get());
        };
        r.start();
        clock.advanceMillis(50);
        assertEquals(List.of("destroy returned, destroyed=0"), events);
        assertEquals(1, r.destroyed.get());
        assertEquals(List.of(10L), r.triggers);
    }

    @Test
    void adjustTimeoutChoosesEachDelay() {
        AtomicInteger calls = new AtomicInteger();
        Recording r = new Recording(10) {
            @Override
            protected int adjustTimeout(int timeoutMs) {
                return timeoutMs + calls.getAndIncrement();
            }
        };
        r.start();
        clock.advanceMillis(40);
        assertEquals(List.of(10L, 21L, 33L), r.triggers);
    }

    @Test
    void thousandsShareOneWheelWithoutThreads() {
        ThreadWatch threads = new ThreadWatch();
        List<Recording> timers = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            Recording r = new Recording(100 + i % 50);
            r.start();
            timers.add(r);
        }
        clock.advanceMillis(150); // periods 100..149 ms: each fires exactly once
        threads.assertNoNewThreads();
        for (Recording r : timers) {
            assertEquals(1, r.triggers.size(), r.name());
        }
        assertEquals(5000, wheel.pendingTimeouts());
    }
}
