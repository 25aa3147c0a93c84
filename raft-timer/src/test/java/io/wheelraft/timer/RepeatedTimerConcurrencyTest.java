package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** RepeatedTimer under real threads: control calls racing with firing. */
class RepeatedTimerConcurrencyTest {

    private final HashedWheelTimer wheel = new HashedWheelTimer(1, TimeUnit.MILLISECONDS, 64);

    @AfterEach
    void stopWheel() {
        wheel.stop();
    }

    private static final class Counting extends RepeatedTimer {
        final AtomicInteger triggers = new AtomicInteger();
        final AtomicInteger inTrigger = new AtomicInteger();
        final AtomicInteger maxConcurrent = new AtomicInteger();
        final AtomicInteger destroys = new AtomicInteger();
        final AtomicBoolean triggeredAfterDestroy = new AtomicBoolean();

        Counting(Timer timer) {
            super("counting", 1, timer);
        }

        @Override
        protected void onTrigger() {
            int now = inTrigger.incrementAndGet();
            maxConcurrent.accumulateAndGet(now, Math::max);
            if (destroys.get() > 0) {
                triggeredAfterDestroy.set(true);
            }
            triggers.incrementAndGet();
            inTrigger.decrementAndGet();
        }

        @Override
        protected void onDestroy() {
            if (inTrigger.get() != 0) {
                triggeredAfterDestroy.set(true);
            }
            destroys.incrementAndGet();
        }
    }

    @Test
    void controlCallsRacingWithFiringKeepOneChainAndDestroyNotifiesOnce() throws Exception {
        for (int round = 0; round < 20; round++) {
            Counting r = new Counting(wheel);
            r.start();
            int threads = 3;
            CountDownLatch done = new CountDownLatch(threads);
            for (int t = 0; t < threads; t++) {
                new Thread(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    for (int i = 0; i < 300; i++) {
                        switch (rnd.nextInt(6)) {
                            case 0 -> r.start();
                            case 1 -> r.stop();
                            case 2 -> r.restart();
                            case 3 -> r.reset(1 + rnd.nextInt(2));
                            case 4 -> r.runOnceNow();
                            default -> r.reset();
                        }
                        if (i % 50 == 0) {
                            Thread.yield();
                        }
                    }
                    done.countDown();
                }).start();
            }
            assertTrue(done.await(20, TimeUnit.SECONDS));
            r.restart();
            int before = r.triggers.get();
            TimerContractTest.waitFor(() -> r.triggers.get() > before + 2, "the timer to keep repeating");
            r.destroy();
            r.destroy();
            TimerContractTest.waitFor(() -> r.destroys.get() == 1, "onDestroy");
            int atDestroy = r.triggers.get();
            // Give a would-be stray chain a chance to fire: wait until the wheel has drained.
            TimerContractTest.waitFor(() -> wheel.pendingTimeouts() == 0, "no timeout left on the wheel");
            assertEquals(atDestroy, r.triggers.get(), "triggered after destroy");
            assertEquals(1, r.destroys.get());
            assertFalse(r.triggeredAfterDestroy.get());
            assertEquals(1, r.maxConcurrent.get(), "onTrigger ran concurrently with itself");
            assertFalse(r.isRunning());
        }
    }

    @Test
    void destroyDuringAnInFlightRunNotifiesAfterItFinishes() throws Exception {
        CountDownLatch inTrigger = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        RepeatedTimer r = new RepeatedTimer("slow", 1, wheel) {
            @Override
            protected void onTrigger() {
                events.add("trigger");
                inTrigger.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                events.add("trigger done");
            }

            @Override
            protected void onDestroy() {
                events.add("destroyed");
            }
        };
        r.start();
        assertTrue(inTrigger.await(10, TimeUnit.SECONDS));
        r.destroy();
        assertEquals(List.of("trigger"), events);
        release.countDown();
        TimerContractTest.waitFor(() -> events.size() == 3, "onDestroy after the run");
        assertEquals(List.of("trigger", "trigger done", "destroyed"), events);
    }

    @Test
    void thousandsOfRepeatedTimersShareTheSharedWheelWithoutNewThreads() throws Exception {
        Timer shared = Timers.shared();
        shared.newTimeout(t -> { }, 0, TimeUnit.MILLISECONDS); // make sure its worker exists
        ThreadWatch threads = new ThreadWatch();
        int n = 2_000;
        CountDownLatch everyOneFired = new CountDownLatch(n);
        List<RepeatedTimer> timers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            AtomicBoolean first = new AtomicBoolean(true);
            RepeatedTimer r = new RepeatedTimer("r" + i, 5 + i % 20, shared) {
                @Override
                protected void onTrigger() {
                    if (first.getAndSet(false)) {
                        everyOneFired.countDown();
                    }
                }
            };
            r.start();
            timers.add(r);
        }
        assertTrue(everyOneFired.await(20, TimeUnit.SECONDS));
        threads.assertNoNewThreads();
        timers.forEach(RepeatedTimer::destroy);
    }

    @Test
    void sharedTimerRefusesToStopAndNamesItsThread() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        String[] threadName = new String[1];
        Timers.shared().newTimeout(t -> {
            threadName[0] = Thread.currentThread().getName();
            ran.countDown();
        }, 1, TimeUnit.MILLISECONDS);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertEquals("wheelraft-timer", threadName[0]);
        org.junit.jupiter.api.Assertions.assertThrows(UnsupportedOperationException.class, () -> Timers.shared().stop());
    }
}
