package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What is specific to {@link HashedWheelTimer}; the shared behaviour is in {@link TimerContractTest}. */
class HashedWheelTimerTest {

    @Test
    void rejectsTimeoutsBeyondMaxPendingNamingTheCount() {
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(new ManualClock()).maxPendingTimeouts(2).build();
        try {
            timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
            Timeout second = timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
            RejectedExecutionException e = assertThrows(RejectedExecutionException.class,
                    () -> timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains("(3)") && e.getMessage().contains("(2)"), e.getMessage());
            second.cancel();
            timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
        } finally {
            timer.stop();
        }
    }

    @Test
    void maxPendingTimeoutsHoldsUnderConcurrentScheduling() throws Exception {
        HashedWheelTimer timer = HashedWheelTimer.builder().maxPendingTimeouts(1000).build();
        try {
            java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger rejected = new java.util.concurrent.atomic.AtomicInteger();
            Thread[] threads = new Thread[4];
            for (int i = 0; i < threads.length; i++) {
                threads[i] = new Thread(() -> {
                    for (int j = 0; j < 500; j++) {
                        try {
                            timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
                            accepted.incrementAndGet();
                        } catch (RejectedExecutionException e) {
                            rejected.incrementAndGet();
                        }
                    }
                });
                threads[i].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(1000, accepted.get());
            assertEquals(1000, rejected.get());
            assertEquals(1000, timer.pendingTimeouts());
        } finally {
            timer.stop();
        }
    }

    @Test
    void validatesArgumentsNamingTheBadValue() {
        assertMessage(IllegalArgumentException.class, "0", () -> new HashedWheelTimer(0, TimeUnit.MILLISECONDS, 8));
        assertMessage(IllegalArgumentException.class, "-1", () -> new HashedWheelTimer(-1, TimeUnit.MILLISECONDS, 8));
        assertMessage(IllegalArgumentException.class, "0", () -> new HashedWheelTimer(1, TimeUnit.MILLISECONDS, 0));
        assertMessage(IllegalArgumentException.class, String.valueOf((1 << 30) + 1),
                () -> new HashedWheelTimer(1, TimeUnit.MILLISECONDS, (1 << 30) + 1));
        assertMessage(IllegalArgumentException.class, "overflows",
                () -> new HashedWheelTimer(Long.MAX_VALUE / 4, TimeUnit.NANOSECONDS, 8));
        assertMessage(NullPointerException.class, "unit", () -> new HashedWheelTimer(1, null, 8));
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(new ManualClock()).build();
        assertMessage(NullPointerException.class, "task", () -> timer.newTimeout(null, 1, TimeUnit.SECONDS));
        assertMessage(NullPointerException.class, "unit", () -> timer.newTimeout(t -> { }, 1, null));
        timer.stop();
    }

    @Test
    void normalisesTicksPerWheelToAPowerOfTwoWithoutOverflow() {
        assertEquals(1, HashedWheelTimer.normalizeTicksPerWheel(1));
        assertEquals(2, HashedWheelTimer.normalizeTicksPerWheel(2));
        assertEquals(4, HashedWheelTimer.normalizeTicksPerWheel(3));
        assertEquals(512, HashedWheelTimer.normalizeTicksPerWheel(512));
        assertEquals(1024, HashedWheelTimer.normalizeTicksPerWheel(513));
        assertEquals(1 << 30, HashedWheelTimer.normalizeTicksPerWheel((1 << 29) + 1));
        assertEquals(1 << 30, HashedWheelTimer.normalizeTicksPerWheel(1 << 30));
    }

    private static void assertMessage(Class<? extends Throwable> type, String fragment,
            org.junit.jupiter.api.function.Executable call) {
        Throwable e = assertThrows(type, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(fragment),
                "message '" + e.getMessage() + "' should name '" + fragment + "'");
    }
}
