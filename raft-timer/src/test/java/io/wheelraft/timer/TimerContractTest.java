package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link Timer} of this module must have, run against each implementation
 * by a tiny subclass. Deterministic on a {@link ManualClock} except where threads are the point.
 */
abstract class TimerContractTest {

    /** A timer with a 1 ms tick driven by {@code clock}, small enough that tests span revolutions. */
    abstract Timer newTimer(ManualClock clock);

    /** The same timer on the system clock, with its own worker thread. */
    abstract Timer newRealTimer();

    abstract long pending(Timer timer);

    final ManualClock clock = new ManualClock();
    final List<Timer> timers = new ArrayList<>();
    final Timer timer = track(newTimer(clock));
    final List<String> fired = new ArrayList<>();
    final List<Long> firedAt = new ArrayList<>();

    Timer track(Timer t) {
        timers.add(t);
        return t;
    }

    @AfterEach
    void stopTimers() {
        for (Timer t : timers) {
            t.stop();
        }
    }

    TimerTask record(String name) {
        return t -> {
            fired.add(name);
            firedAt.add(clock.nanoTime());
        };
    }

    @Test
    void startsNoThreadAndFiresOnlyWhenTheClockAdvances() {
        ThreadWatch threads = new ThreadWatch();
        timer.newTimeout(record("a"), 5, TimeUnit.MILLISECONDS);
        threads.assertNoNewThreads();
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
    void neverFiresEarlyAndAtMostOneTickLate() {
        long[] delaysMicros = {1, 999, 1000, 1001, 2500, 7999, 8000, 8001, 15_500, 64_001, 300_000, 5_000_123};
        List<long[]> seen = new ArrayList<>();
        for (long d : delaysMicros) {
            timer.newTimeout(t -> seen.add(new long[] {d * 1000, clock.nanoTime()}), d, TimeUnit.MICROSECONDS);
        }
        clock.advance(6, TimeUnit.SECONDS);
        assertEquals(delaysMicros.length, seen.size());
        for (long[] s : seen) {
            assertTrue(s[1] >= s[0], "fired early: deadline " + s[0] + " at " + s[1]);
            assertTrue(s[1] - s[0] < 1_000_000, "more than a tick late: deadline " + s[0] + " at " + s[1]);
        }
    }

    @Test
    void firesDeadlinesBeyondOneRevolutionAtTheirOwnTick() {
        timer.newTimeout(record("19"), 19, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("3"), 3, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("11"), 11, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("3600000"), 1, TimeUnit.HOURS);
        clock.advanceMillis(3);
        assertEquals(List.of("3"), fired);
        clock.advanceMillis(7);
        assertEquals(List.of("3"), fired);
        clock.advanceMillis(1);
        assertEquals(List.of("3", "11"), fired);
        clock.advanceMillis(100);
        assertEquals(List.of("3", "11", "19"), fired);
        clock.advance(1, TimeUnit.HOURS);
        assertEquals(List.of("3", "11", "19", "3600000"), fired);
        assertEquals(List.of(3_000_000L, 11_000_000L, 19_000_000L, 3_600_000_000_000L), firedAt);
    }

    @Test
    void firesWithinTheSameAdvanceWhatTasksScheduleWithNoDelay() {
        timer.newTimeout(t -> {
            fired.add("first@" + clock.nanoTime());
            timer.newTimeout(record("second"), 0, TimeUnit.MILLISECONDS);
        }, 2, TimeUnit.MILLISECONDS);
        clock.advanceMillis(2);
        assertEquals(List.of("first@2000000", "second"), fired);
    }

    @Test
    void zeroDelayFromATaskFiresAtTheNextTickWhenTheAdvanceGoesFurther() {
        timer.newTimeout(t -> timer.newTimeout(record("second"), 0, TimeUnit.MILLISECONDS), 2, TimeUnit.MILLISECONDS);
        clock.advanceMillis(10);
        assertEquals(List.of("second"), fired);
        assertTrue(firedAt.get(0) <= 3_000_000L, "fired at " + firedAt);
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
        timer.newTimeout(record("b"), 700, TimeUnit.MICROSECONDS);
        clock.advance(500, TimeUnit.MICROSECONDS);
        assertEquals(List.of("a"), fired);
        assertEquals(500_000L, clock.nanoTime());
        clock.advance(500, TimeUnit.MICROSECONDS);
        assertEquals(List.of("a", "b"), fired);
    }

    @Test
    void advanceByZeroFiresWhatIsDueNow() {
        timer.newTimeout(record("now"), 0, TimeUnit.MILLISECONDS);
        clock.advanceMillis(0);
        assertEquals(List.of("now"), fired);
    }

    @Test
    void cancelBeforeExpiryPreventsTheRunAndReleasesTheTimeoutAtOnce() {
        Timeout t = timer.newTimeout(record("x"), 5, TimeUnit.MILLISECONDS);
        assertEquals(1, pending(timer));
        assertTrue(t.cancel());
        assertTrue(t.isCancelled());
        assertFalse(t.cancel());
        assertEquals(0, pending(timer));
        clock.advanceMillis(10);
        assertEquals(List.of(), fired);
        assertFalse(t.isExpired());
    }

    @Test
    void cancelWhileTheTaskRunsReturnsFalse() {
        AtomicReference<Boolean> cancelled = new AtomicReference<>();
        timer.newTimeout(t -> cancelled.set(t.cancel()), 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertEquals(Boolean.FALSE, cancelled.get());
    }

    @Test
    void cancelAfterExpiryReturnsFalse() {
        Timeout t = timer.newTimeout(record("x"), 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertTrue(t.isExpired());
        assertFalse(t.cancel());
        assertFalse(t.isCancelled());
        assertEquals(t.timer(), timer);
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
        Timer other = track(newTimer(clock));
        timer.newTimeout(record("t1@3"), 3, TimeUnit.MILLISECONDS);
        other.newTimeout(record("t2@2"), 2, TimeUnit.MILLISECONDS);
        other.newTimeout(record("t2@5"), 5, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("t1@5"), 5, TimeUnit.MILLISECONDS);
        clock.advanceMillis(10);
        assertEquals(List.of("t2@2", "t1@3", "t1@5", "t2@5"), fired);
    }

    @Test
    void sameCallSequenceFiresTheSameWayEveryTime() {
        List<String> first = runScript(42);
        assertTrue(first.size() > 300, "most of the 500 timeouts should run: " + first.size());
        assertEquals(first, runScript(42));
    }

    private List<String> runScript(long seed) {
        ManualClock c = new ManualClock();
        Timer t = track(newTimer(c));
        java.util.Random random = new java.util.Random(seed);
        List<String> log = new ArrayList<>();
        List<Timeout> handles = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            String name = "t" + i;
            handles.add(t.newTimeout(x -> log.add(name + "@" + c.nanoTime()), random.nextInt(50), TimeUnit.MILLISECONDS));
            if (random.nextInt(4) == 0) {
                handles.get(random.nextInt(handles.size())).cancel();
            }
            if (random.nextInt(10) == 0) {
                c.advance(random.nextInt(3000), TimeUnit.MICROSECONDS);
            }
        }
        c.advanceMillis(100);
        long cancelled = handles.stream().filter(Timeout::isCancelled).count();
        assertEquals(500, log.size() + cancelled);
        return log;
    }

    @Test
    void throwingTaskIsLoggedAndLaterTasksStillRun() {
        timer.newTimeout(t -> {
            throw new IllegalStateException("boom (expected by the test)");
        }, 1, TimeUnit.MILLISECONDS);
        timer.newTimeout(t -> {
            throw new AssertionError("error (expected by the test)");
        }, 1, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("after"), 2, TimeUnit.MILLISECONDS);
        clock.advanceMillis(5);
        assertEquals(List.of("after"), fired);
    }

    @Test
    void stopReturnsTheTimeoutsThatNeverRanAndRefusesNewOnes() {
        Timeout ran = timer.newTimeout(record("ran"), 1, TimeUnit.MILLISECONDS);
        Timeout a = timer.newTimeout(record("a"), 1, TimeUnit.HOURS);
        Timeout b = timer.newTimeout(record("b"), 10, TimeUnit.MILLISECONDS);
        Timeout c = timer.newTimeout(record("c"), 2, TimeUnit.HOURS);
        c.cancel();
        clock.advanceMillis(2);
        Set<Timeout> unprocessed = timer.stop();
        assertEquals(Set.of(a, b), unprocessed);
        assertTrue(ran.isExpired());
        assertEquals(Set.of(), timer.stop());
        clock.advance(3, TimeUnit.HOURS);
        assertEquals(List.of("ran"), fired);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> timer.newTimeout(record("late"), 1, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("stopped"), e.getMessage());
    }

    @Test
    void stopFromOwnTaskThrows() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        timer.newTimeout(t -> {
            try {
                timer.stop();
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
    }

    @Test
    void hugeDelaysDoNotOverflow() {
        clock.advance(1, TimeUnit.DAYS);
        Timeout forever = timer.newTimeout(record("forever"), Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        Timeout alsoForever = timer.newTimeout(record("days"), Long.MAX_VALUE, TimeUnit.DAYS);
        timer.newTimeout(record("soon"), 1, TimeUnit.MILLISECONDS);
        clock.advance(365, TimeUnit.DAYS);
        assertEquals(List.of("soon"), fired);
        assertEquals(2, pending(timer));
        assertTrue(forever.cancel());
        assertTrue(alsoForever.cancel());
        assertEquals(0, pending(timer));
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> timer.newTimeout(null, 1, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("task"));
        e = assertThrows(NullPointerException.class, () -> timer.newTimeout(t -> { }, 1, null));
        assertTrue(e.getMessage().contains("unit"));
    }

    @Test
    void advancingFromATaskIsRefused() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        timer.newTimeout(t -> {
            try {
                clock.advanceMillis(1);
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
    }

    // ---- real threads: the system clock and a worker ----

    @Test
    void firesOnTheWorkerThreadNeverEarly() throws Exception {
        Timer real = track(newRealTimer());
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Long> lateness = new AtomicReference<>();
        long start = System.nanoTime();
        real.newTimeout(t -> {
            lateness.set(System.nanoTime() - start - TimeUnit.MILLISECONDS.toNanos(20));
            done.countDown();
        }, 20, TimeUnit.MILLISECONDS);
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(lateness.get() >= 0, "fired early by " + -lateness.get() + " ns");
    }

    @Test
    void earlierTimeoutWakesAParkedWorker() throws Exception {
        Timer real = track(newRealTimer());
        real.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        CountDownLatch idle = new CountDownLatch(1);
        real.newTimeout(t -> idle.countDown(), 1, TimeUnit.MILLISECONDS);
        assertTrue(idle.await(10, TimeUnit.SECONDS));
        // The worker is now parked until the one-hour timeout; a nearer one must wake it.
        CountDownLatch fired = new CountDownLatch(1);
        real.newTimeout(t -> fired.countDown(), 5, TimeUnit.MILLISECONDS);
        assertTrue(fired.await(10, TimeUnit.SECONDS), "parked worker was not woken");
    }

    @Test
    void stopFromOwnTaskOnTheWorkerThrows() throws Exception {
        Timer real = track(newRealTimer());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        real.newTimeout(t -> {
            try {
                real.stop();
            } catch (Throwable e) {
                thrown.set(e);
            }
            done.countDown();
        }, 1, TimeUnit.MILLISECONDS);
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
    }

    @Test
    void concurrentScheduleAndCancelNeverLosesOrDoublesARun() throws Exception {
        Timer real = track(newRealTimer());
        int threads = 4;
        int perThread = 5_000;
        int n = threads * perThread;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        Timeout[] handles = new Timeout[n];
        boolean[] cancelWon = new boolean[n];
        List<Thread> workers = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int w = 0; w < threads; w++) {
            int base = w * perThread;
            Thread th = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = base; i < base + perThread; i++) {
                    int id = i;
                    handles[id] = real.newTimeout(t -> runs.incrementAndGet(id), r.nextInt(3_000), TimeUnit.MICROSECONDS);
                    if (r.nextBoolean()) {
                        // Cancel some right away, others after a moment so that cancels race expiry.
                        int victim = r.nextBoolean() ? id : base + r.nextInt(id - base + 1);
                        cancelWon[victim] |= handles[victim].cancel();
                    }
                }
            });
            workers.add(th);
            th.start();
        }
        go.countDown();
        for (Thread th : workers) {
            th.join();
        }
        waitFor(() -> pending(real) == 0, "all timeouts to leave the wheel");
        waitFor(() -> {
            for (int i = 0; i < n; i++) {
                if (!handles[i].isCancelled() && runs.get(i) == 0) {
                    return false;
                }
            }
            return true;
        }, "every uncancelled timeout to run");
        int ran = 0;
        for (int i = 0; i < n; i++) {
            Timeout h = handles[i];
            assertEquals(h.isCancelled() ? 0 : 1, runs.get(i), "timeout " + i + " " + h);
            assertTrue(h.isCancelled() != h.isExpired(), "exactly one of cancelled/expired: " + h);
            assertEquals(cancelWon[i], h.isCancelled(), "cancel() result agrees with state: " + h);
            ran += runs.get(i);
        }
        assertTrue(ran > 0 && ran < n, "expected a mix of runs and cancels, ran " + ran + " of " + n);
    }

    @Test
    void concurrentSchedulingWhileAnotherThreadAdvancesTheManualClock() throws Exception {
        int threads = 3;
        int perThread = 3_000;
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger cancelled = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(threads);
        for (int w = 0; w < threads; w++) {
            new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                for (int i = 0; i < perThread; i++) {
                    Timeout t = timer.newTimeout(x -> runs.incrementAndGet(), r.nextInt(20), TimeUnit.MILLISECONDS);
                    if (r.nextInt(3) == 0 && t.cancel()) {
                        cancelled.incrementAndGet();
                    }
                }
                done.countDown();
            }).start();
        }
        while (done.getCount() > 0) {
            clock.advance(100, TimeUnit.MICROSECONDS);
        }
        clock.advanceMillis(25);
        assertEquals(threads * perThread, runs.get() + cancelled.get());
        assertEquals(0, pending(timer));
    }

    static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
