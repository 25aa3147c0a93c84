package io.wheelraft.timer;

import static io.wheelraft.timer.HashedWheelTimerProbe.deadlineOf;
import static io.wheelraft.timer.HashedWheelTimerProbe.drainNanos;
import static io.wheelraft.timer.HashedWheelTimerProbe.isInSlot;
import static io.wheelraft.timer.HashedWheelTimerProbe.isStaged;
import static io.wheelraft.timer.HashedWheelTimerProbe.isStaging;
import static io.wheelraft.timer.HashedWheelTimerProbe.relativeNow;
import static io.wheelraft.timer.HashedWheelTimerProbe.runWorkerPass;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The staged fast path of {@link HashedWheelTimer}: while the worker ticks, a schedule skips the
 * clock and the worker stamps the deadline when it drains. Deterministic tests drive the
 * worker's passes by hand on a clock the test sets (not a {@link ManualClock}, which never
 * stages); the last tests run the real worker on the system clock.
 */
class HashedWheelTimerStagingTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A clock the test sets, counting how often it is read. */
    static final class SetClock implements Clock {
        final AtomicLong now = new AtomicLong(1_000 * MS);
        final AtomicLong reads = new AtomicLong();

        @Override
        public long nanoTime() {
            reads.incrementAndGet();
            return now.get();
        }

        void set(long nanos) {
            now.set(nanos);
        }

        void advance(long nanos) {
            now.addAndGet(nanos);
        }
    }

    private final SetClock clock = new SetClock();
    private final List<HashedWheelTimer> timers = new ArrayList<>();
    private final List<String> fired = new ArrayList<>();

    @AfterEach
    void stopTimers() {
        for (HashedWheelTimer t : timers) {
            t.stop();
        }
    }

    private HashedWheelTimer handDriven(long maxPending) {
        HashedWheelTimer t = HashedWheelTimer.builder().clock(clock).tickDuration(1, TimeUnit.MILLISECONDS)
                .ticksPerWheel(8).maxPendingTimeouts(maxPending).threadFactory(HashedWheelTimerProbe.noWorker()).build();
        timers.add(t);
        return t;
    }

    private TimerTask record(String name) {
        return t -> fired.add(name);
    }

    /** Enough direct schedules (an hour out) to make the worker tick, then the passes that turn staging on. */
    private static void startTicking(HashedWheelTimer timer) {
        for (int i = 0; i < HashedWheelTimer.ACTIVATE_AFTER_DIRECT; i++) {
            timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        }
        runWorkerPass(timer); // sees the burst: keeps ticking
        runWorkerPass(timer); // lets callers stage
        assertTrue(isStaging(timer), "worker should be ticking after a burst of schedules");
    }

    @Test
    void aFewSchedulesDoNotMakeTheWorkerTick() {
        HashedWheelTimer timer = handDriven(0);
        for (int i = 0; i < HashedWheelTimer.ACTIVATE_AFTER_DIRECT - 1; i++) {
            assertFalse(isStaged(timer, timer.newTimeout(t -> { }, 1, TimeUnit.HOURS)));
        }
        runWorkerPass(timer);
        runWorkerPass(timer);
        assertFalse(isStaging(timer));
    }

    @Test
    void whileTheWorkerTicksSchedulingReadsNoClock() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long reads = clock.reads.get();
        int n = HashedWheelTimer.STAMP_EVERY - 1; // the next one would stamp the list itself
        for (int i = 0; i < n; i++) {
            assertTrue(isStaged(timer, timer.newTimeout(t -> { }, 10, TimeUnit.MILLISECONDS)));
        }
        assertEquals(reads, clock.reads.get(), "a staged schedule must not read the clock");
        assertEquals(HashedWheelTimer.ACTIVATE_AFTER_DIRECT + n, timer.pendingTimeouts());
    }

    @Test
    void drainStampsTheDeadlineFromTheDrainTimeSoItNeverFiresEarly() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long calledAt = relativeNow(timer);
        Timeout t = timer.newTimeout(record("x"), 10, TimeUnit.MILLISECONDS);
        assertTrue(isStaged(timer, t));
        assertEquals(10 * MS, deadlineOf(timer, t), "a staged timeout holds its delay");

        clock.advance(400_000); // the drain comes 0.4 ms after the call
        long drainedAt = relativeNow(timer);
        runWorkerPass(timer);
        assertFalse(isStaged(timer, t));
        assertEquals(drainedAt + 10 * MS, deadlineOf(timer, t));
        assertTrue(deadlineOf(timer, t) >= calledAt + 10 * MS);

        clock.advance(10 * MS - 1);
        runWorkerPass(timer);
        assertEquals(List.of(), fired, "fired before its stamped deadline");
        clock.advance(1);
        runWorkerPass(timer);
        assertEquals(List.of("x"), fired);
        assertTrue(t.isExpired());
    }

    @Test
    void aFastStreamStampsItsStagedTimeoutsWithoutWaitingForTheWorker() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long reads = clock.reads.get();
        List<Timeout> stream = new ArrayList<>();
        for (int i = 0; i < HashedWheelTimer.STAMP_EVERY - 1; i++) {
            stream.add(timer.newTimeout(t -> { }, 5, TimeUnit.MILLISECONDS));
        }
        assertTrue(stream.stream().allMatch(t -> isStaged(timer, t)));
        clock.advance(100_000);
        long stampedAt = relativeNow(timer);
        stream.add(timer.newTimeout(t -> { }, 5, TimeUnit.MILLISECONDS));
        assertEquals(reads + 1, clock.reads.get() - 1, "one clock read per " + HashedWheelTimer.STAMP_EVERY
                + " staged schedules (plus the test's own)");
        for (Timeout t : stream) {
            assertFalse(isStaged(timer, t));
            assertEquals(stampedAt + 5 * MS, deadlineOf(timer, t));
        }
    }

    @Test
    void zeroDelayStagedTimeoutFiresOnTheNextPassAfterItsDrain() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        timer.newTimeout(record("now"), 0, TimeUnit.MILLISECONDS);
        clock.advance(300_000);
        runWorkerPass(timer);
        assertEquals(List.of(), fired, "the drain time is the deadline; the pass that drained started earlier");
        runWorkerPass(timer);
        assertEquals(List.of("now"), fired);
    }

    @Test
    void stagedTimeoutsWithEqualDelaysFireInSchedulingOrder() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        timer.newTimeout(record("a"), 5, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("b"), 5, TimeUnit.MILLISECONDS);
        timer.newTimeout(record("early"), 4, TimeUnit.MILLISECONDS);
        runWorkerPass(timer);
        clock.advance(6 * MS);
        runWorkerPass(timer);
        assertEquals(List.of("early", "a", "b"), fired);
    }

    @Test
    void cancelBeforeDrainReleasesTheTimeoutAndItNeverRuns() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long before = timer.pendingTimeouts();
        Timeout previous = timer.newTimeout(record("previous"), 1, TimeUnit.MILLISECONDS);
        Timeout next = timer.newTimeout(record("next"), 1, TimeUnit.MILLISECONDS);
        assertTrue(previous.cancel(), "cancel of an undrained timeout");
        assertTrue(previous.isCancelled());
        assertFalse(previous.cancel(), "second cancel");
        assertEquals(before + 1, timer.pendingTimeouts(), "no longer counted as pending");
        runWorkerPass(timer);
        clock.advance(5 * MS);
        runWorkerPass(timer);
        assertEquals(List.of("next"), fired);
        assertTrue(next.isExpired());
        assertFalse(previous.isExpired());
    }

    @Test
    void aCancelledStagedTimeoutIsDroppedByTheDrainWithoutEnteringTheWheel() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        Timeout previous = timer.newTimeout(record("previous"), 3, TimeUnit.MILLISECONDS);
        Timeout next = timer.newTimeout(record("next"), 3, TimeUnit.MILLISECONDS);
        assertTrue(previous.cancel());
        assertFalse(isInSlot(timer, previous));
        runWorkerPass(timer);
        assertFalse(isStaged(timer, previous), "the drain took it off the staged list");
        assertFalse(isInSlot(timer, previous), "and dropped it instead of linking it");
        assertTrue(isInSlot(timer, next));
        clock.advance(5 * MS);
        runWorkerPass(timer);
        assertEquals(List.of("next"), fired);
    }

    @Test
    void aCallersStampFixesDeadlinesButOnlyTheWorkerLinksThem() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        List<Timeout> stream = new ArrayList<>();
        for (int i = 0; i < HashedWheelTimer.STAMP_EVERY; i++) { // the last one stamps the list
            stream.add(timer.newTimeout(record("t" + i), 0, TimeUnit.MILLISECONDS));
        }
        long stampedAt = relativeNow(timer);
        for (Timeout t : stream) {
            assertFalse(isStaged(timer, t), "stamped");
            assertFalse(isInSlot(timer, t), "but not linked: a cancel before the worker's pass touches no slot");
            assertEquals(stampedAt, deadlineOf(timer, t));
        }
        Timeout cancelled = stream.remove(0);
        assertTrue(cancelled.cancel());
        clock.advance(1);
        runWorkerPass(timer); // links the stamped ones before expiring: their deadlines have passed
        assertEquals(HashedWheelTimer.STAMP_EVERY - 1, fired.size(), "stamped timeouts fire in the pass that links them");
        assertFalse(fired.contains("t0"));
        assertFalse(isInSlot(timer, cancelled));
        assertTrue(stream.stream().allMatch(Timeout::isExpired));
    }

    @Test
    void cancelAfterTheWorkerLinkedTheTimeoutUnlinksItAtOnce() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long before = timer.pendingTimeouts();
        Timeout t = timer.newTimeout(record("t"), 3, TimeUnit.MILLISECONDS);
        runWorkerPass(timer);
        assertTrue(isInSlot(timer, t));
        assertTrue(t.cancel());
        assertFalse(isInSlot(timer, t), "unlinked from its slot by the cancel itself");
        assertEquals(before, timer.pendingTimeouts());
        clock.advance(5 * MS);
        runWorkerPass(timer);
        assertEquals(List.of(), fired);
    }

    @Test
    void aCancelledStagedTimeoutFreesItsPlaceUnderMaxPendingAtOnce() {
        int limit = HashedWheelTimer.ACTIVATE_AFTER_DIRECT + 1;
        HashedWheelTimer timer = handDriven(limit);
        startTicking(timer);
        Timeout armed = timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
        for (int i = 0; i < 3 * HashedWheelTimer.STAMP_EVERY; i++) { // the reset pattern at the limit
            assertTrue(armed.cancel());
            armed = timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
        }
        assertEquals(limit, timer.pendingTimeouts());
    }

    @Test
    void maxPendingTimeoutsCountsStagedTimeoutsExactly() {
        int limit = HashedWheelTimer.ACTIVATE_AFTER_DIRECT + 2;
        HashedWheelTimer timer = handDriven(limit);
        startTicking(timer);
        Timeout a = timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
        timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
        assertTrue(isStaged(timer, a));
        RejectedExecutionException e = assertThrows(RejectedExecutionException.class,
                () -> timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("(" + (limit + 1) + ")"), e.getMessage());
        assertTrue(a.cancel());
        assertTrue(isStaged(timer, timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS)));
        assertEquals(limit, timer.pendingTimeouts());
    }

    @Test
    void stopReturnsUndrainedTimeoutsInDeadlineOrderAndRunsNone() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        Timeout later = timer.newTimeout(record("later"), 20, TimeUnit.MILLISECONDS);
        Timeout sooner = timer.newTimeout(record("sooner"), 10, TimeUnit.MILLISECONDS);
        Timeout cancelled = timer.newTimeout(record("cancelled"), 5, TimeUnit.MILLISECONDS);
        cancelled.cancel();
        Set<Timeout> left = timer.stop();
        List<Timeout> order = new ArrayList<>(left);
        assertEquals(HashedWheelTimer.ACTIVATE_AFTER_DIRECT + 2, left.size());
        assertEquals(sooner, order.get(0));
        assertEquals(later, order.get(1));
        assertFalse(left.contains(cancelled));
        assertFalse(sooner.isExpired() || sooner.isCancelled());
        assertEquals(0, timer.pendingTimeouts());
        assertFalse(isStaging(timer), "stop lowers the staging flags");
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> { }, 1, TimeUnit.MILLISECONDS));
        assertEquals(0, timer.pendingTimeouts());
        assertEquals(List.of(), fired);
    }

    @Test
    void afterQuietPassesTheWorkerStopsTickingAndSchedulesReadTheClock() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        long now = relativeNow(timer);
        List<Long> wakes = new ArrayList<>();
        while (isStaging(timer)) {
            wakes.add(runWorkerPass(timer));
            assertTrue(wakes.size() <= HashedWheelTimer.QUIET_PASSES, "still ticking after " + wakes);
        }
        for (long wake : wakes.subList(0, wakes.size() - 1)) {
            assertTrue(wake <= now + drainNanos(timer), "a ticking worker passes again within the drain interval");
        }
        long idleWake = wakes.get(wakes.size() - 1); // the pass that lowered the flags
        assertTrue(idleWake > now + TimeUnit.MINUTES.toNanos(59), "an idle worker parks until the next due tick: " + idleWake);

        clock.advance(7 * MS);
        Timeout t = timer.newTimeout(t2 -> { }, 3, TimeUnit.MILLISECONDS);
        assertFalse(isStaged(timer, t));
        assertEquals(relativeNow(timer) + 3 * MS, deadlineOf(timer, t), "a direct schedule stamps its own clock reading");
    }

    @Test
    void aScheduleJustBeforeTheIdlePassIsDrainedAndKeepsTheWorkerTicking() {
        HashedWheelTimer timer = handDriven(0);
        startTicking(timer);
        // startTicking's second pass was the first quiet one; after these the next pass would
        // lower the flags, but a schedule wins the stripe lock first.
        for (int i = 0; i < HashedWheelTimer.QUIET_PASSES - 1; i++) {
            runWorkerPass(timer);
            assertTrue(isStaging(timer));
        }
        Timeout t = timer.newTimeout(record("x"), 2, TimeUnit.MILLISECONDS);
        assertTrue(isStaged(timer, t));
        long now = relativeNow(timer);
        long wake = runWorkerPass(timer);
        assertFalse(isStaged(timer, t), "drained by the idle pass");
        assertTrue(wake <= now + drainNanos(timer), "activity seen: the worker keeps ticking");
        runWorkerPass(timer);
        assertTrue(isStaging(timer), "and lets callers stage again");
        clock.advance(2 * MS);
        runWorkerPass(timer);
        assertEquals(List.of("x"), fired);
    }

    @Test
    void theWorkerWakesAQuarterTickAfterAnEarlyDeadlineInsteadOfAtTheTicksEnd() {
        HashedWheelTimer timer = handDriven(0);
        long slack = MS / HashedWheelTimer.SLACK_DIVISOR;
        long t0 = relativeNow(timer); // 0: tick 1 ends at 1 ms
        timer.newTimeout(record("early"), 100, TimeUnit.MICROSECONDS);
        timer.newTimeout(record("late"), 900, TimeUnit.MICROSECONDS);
        long wake = runWorkerPass(timer);
        assertEquals(t0 + 100_000 + slack, wake, "the earliest deadline plus the slack, before the tick's end");

        clock.advance(99_999);
        runWorkerPass(timer);
        assertEquals(List.of(), fired, "never before the deadline");
        clock.advance(1);
        wake = runWorkerPass(timer);
        assertEquals(List.of("early"), fired);
        assertEquals(t0 + MS, wake, "the next deadline plus the slack is past the tick's end: wake at the end");

        clock.advance(800_000 - 1);
        runWorkerPass(timer);
        assertEquals(List.of("early"), fired);
        clock.advance(1);
        runWorkerPass(timer);
        assertEquals(List.of("early", "late"), fired, "fired mid-tick, at its deadline");
    }

    @Test
    void manualClockTimerNeverStages() {
        ManualClock manual = new ManualClock();
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(manual).build();
        timers.add(timer);
        List<Timeout> all = new ArrayList<>();
        for (int i = 0; i < 10 * HashedWheelTimer.ACTIVATE_AFTER_DIRECT; i++) {
            all.add(timer.newTimeout(t -> { }, 1, TimeUnit.MILLISECONDS));
        }
        manual.advance(0, TimeUnit.MILLISECONDS);
        for (Timeout t : all) {
            assertFalse(isStaged(timer, t));
        }
        manual.advanceMillis(1);
        assertTrue(all.stream().allMatch(Timeout::isExpired));
    }

    // ---- the real worker on the system clock ----

    @Test
    void aSteadyStreamIsStagedAndAnIdleWorkerStopsTicking() throws Exception {
        HashedWheelTimer timer = HashedWheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
        timers.add(timer);
        AtomicReference<Timeout> last = new AtomicReference<>();
        TimerContractTest.waitFor(() -> {
            Timeout t = timer.newTimeout(x -> { }, 1, TimeUnit.SECONDS);
            Timeout previous = last.getAndSet(t);
            if (previous != null) {
                previous.cancel();
            }
            return isStaged(timer, t);
        }, "a stream of schedules to be staged");
        last.get().cancel();
        TimerContractTest.waitFor(() -> !isStaging(timer), "the worker to stop ticking once schedules stop");
        assertEquals(0, timer.pendingTimeouts());
    }

    /**
     * Threads schedule in bursts separated by pauses of varying length, so the worker keeps
     * switching between ticking (staged schedules) and parking (direct ones), and schedules
     * race the pass that switches. Every timeout must run exactly once unless cancelled, none
     * before its delay has passed since the call began, and none may be stranded by a worker
     * that parked while a timeout was staged.
     */
    @Test
    void burstsRacingTheWorkersIdleSwitchNeverLoseOrEarlyFireATimeout() throws Exception {
        HashedWheelTimer timer = HashedWheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
        timers.add(timer);
        int threads = 3;
        int perThread = 4_000;
        int n = threads * perThread;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        AtomicLongArray earliestAllowed = new AtomicLongArray(n);
        AtomicLongArray ranAt = new AtomicLongArray(n);
        Timeout[] handles = new Timeout[n];
        AtomicInteger stagedSeen = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            int base = w * perThread;
            Thread th = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                int i = base;
                while (i < base + perThread) {
                    int burst = 1 + r.nextInt(3 * HashedWheelTimer.ACTIVATE_AFTER_DIRECT);
                    for (int k = 0; k < burst && i < base + perThread; k++, i++) {
                        int id = i;
                        long delay = r.nextInt(2_500);
                        earliestAllowed.set(id, System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(delay));
                        handles[id] = timer.newTimeout(t -> {
                            ranAt.set(id, System.nanoTime());
                            runs.incrementAndGet(id);
                        }, delay, TimeUnit.MICROSECONDS);
                        if (isStaged(timer, handles[id])) {
                            stagedSeen.incrementAndGet();
                        }
                        if (r.nextInt(4) == 0) {
                            handles[id].cancel(); // the reset pattern, on a quarter of them
                        }
                    }
                    // A pause of 0 to ~4 ms: sometimes shorter, sometimes longer than it takes
                    // the worker to stop ticking.
                    long pauseUntil = System.nanoTime() + r.nextLong(4 * MS);
                    while (System.nanoTime() < pauseUntil) {
                        Thread.onSpinWait();
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
        TimerContractTest.waitFor(() -> timer.pendingTimeouts() == 0, "every timeout to leave the wheel");
        TimerContractTest.waitFor(() -> {
            for (int i = 0; i < n; i++) {
                if (!handles[i].isCancelled() && runs.get(i) == 0) {
                    return false;
                }
            }
            return true;
        }, "every uncancelled timeout to run");
        for (int i = 0; i < n; i++) {
            Timeout h = handles[i];
            assertEquals(h.isCancelled() ? 0 : 1, runs.get(i), "timeout " + i + " " + h);
            if (!h.isCancelled()) {
                long early = earliestAllowed.get(i) - ranAt.get(i);
                assertTrue(early <= 0, "timeout " + i + " fired " + early + " ns early");
            }
        }
        assertTrue(stagedSeen.get() > 0, "the staged path was never taken");
    }
}
