package io.wheelraft.rpc;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CoalescerTest {

    /** Keeps scheduled flushes for the test to run by hand instead of running them. */
    private static final class ManualScheduler extends ScheduledThreadPoolExecutor {
        final List<Runnable> tasks = new CopyOnWriteArrayList<>();
        final List<Long> delaysMs = new CopyOnWriteArrayList<>();

        ManualScheduler() {
            super(1);
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
            delaysMs.add(0L);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
            tasks.add(task);
            delaysMs.add(unit.toMillis(delay));
            return null;
        }

        void runAll() {
            List<Runnable> due = new ArrayList<>(tasks);
            tasks.clear();
            due.forEach(Runnable::run);
        }
    }

    private final ManualScheduler scheduler = new ManualScheduler();
    private final List<List<String>> batches = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private Coalescer<String> coalescer(int maxBatchBytes) {
        return new Coalescer<>(scheduler, 5, maxBatchBytes, String::length, b -> batches.add(List.copyOf(b)));
    }

    @Test
    void anUrgentItemLeavesAtOnceOnTheCallersThread() {
        Coalescer<String> c = coalescer(1000);
        c.add("vote", true);
        assertEquals(List.of(List.of("vote")), batches);
        assertTrue(scheduler.tasks.isEmpty());
    }

    @Test
    void itemsThatMayWaitLeaveTogetherWhenTheOneScheduledFlushRuns() {
        Coalescer<String> c = coalescer(1000);
        c.add("hb1", false);
        c.add("hb2", false);
        c.add("hb3", false);
        assertTrue(batches.isEmpty());
        assertEquals(List.of(5L), scheduler.delaysMs, "one flush for the lot, after the delay");

        scheduler.runAll();

        assertEquals(List.of(List.of("hb1", "hb2", "hb3")), batches);
        c.add("hb4", false);
        assertEquals(2, scheduler.delaysMs.size(), "the next waiting item schedules a new flush");
    }

    @Test
    void anUrgentItemTakesTheWaitingOnesAlongInOrderAndTheFlushFindsNothingLeft() {
        Coalescer<String> c = coalescer(1000);
        c.add("hb1", false);
        c.add("hb2", false);
        c.add("append", true);
        assertEquals(List.of(List.of("hb1", "hb2", "append")), batches);

        scheduler.runAll();
        assertEquals(1, batches.size());
    }

    @Test
    void batchesStayUnderTheByteLimitAndAnOversizedItemGoesAlone() {
        Coalescer<String> c = coalescer(10);
        c.add("aaaa", false);
        c.add("bbbb", false);
        c.add("cccc", false);
        c.add("0123456789abcdef", false);
        c.add("dd", true);
        assertEquals(List.of(List.of("aaaa", "bbbb"), List.of("cccc"), List.of("0123456789abcdef"), List.of("dd")), batches);
    }

    @Test
    void whileOneThreadSendsOthersHandItTheirItemsAndItSendsThemNext() throws Exception {
        CountDownLatch inSink = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> senders = new CopyOnWriteArrayList<>();
        Coalescer<String> c = new Coalescer<>(scheduler, 5, 1000, String::length, b -> {
            senders.add(Thread.currentThread().getName());
            batches.add(List.copyOf(b));
            if (b.contains("first")) {
                inSink.countDown();
                await(release);
            }
        });
        Thread sender = new Thread(() -> c.add("first", true), "sender");
        sender.start();
        assertTrue(inSink.await(10, TimeUnit.SECONDS));

        c.add("second", true); // returns at once: the sender takes it along
        c.add("third", false);
        assertEquals(1, batches.size());

        release.countDown();
        sender.join(10_000);
        assertEquals(List.of(List.of("first"), List.of("second", "third")), batches);
        assertEquals(List.of("sender", "sender"), senders);
    }

    @Test
    void aThreadThatKeepsFindingMoreHandsTheRestToTheScheduler() {
        List<String> senders = new CopyOnWriteArrayList<>();
        Coalescer<String>[] self = new Coalescer[1];
        int[] sent = {0};
        self[0] = new Coalescer<>(scheduler, 5, 1000, String::length, b -> {
            senders.add(Thread.currentThread().getName());
            batches.add(List.copyOf(b));
            self[0].add("more" + (++sent[0]), true); // another thread's frame arrives during every send
        });
        self[0].add("first", true);
        assertEquals(Coalescer.ROUNDS_PER_THREAD, batches.size(), "the caller stops after its share");
        assertEquals(List.of(0L), scheduler.delaysMs, "and hands the rest over at once");

        scheduler.tasks.remove(0).run(); // the scheduler's turn: it sends what is queued, and so on
        assertEquals(2 * Coalescer.ROUNDS_PER_THREAD, batches.size());
        assertEquals(List.of("more" + Coalescer.ROUNDS_PER_THREAD), batches.get(Coalescer.ROUNDS_PER_THREAD));
    }

    @Test
    void closingDropsWhatWaitsAndIgnoresWhatComes() {
        Coalescer<String> c = coalescer(1000);
        c.add("hb", false);
        c.close();
        scheduler.runAll();
        c.add("append", true);
        assertTrue(batches.isEmpty());
        assertEquals(0, c.queued());
    }

    @Test
    void onceTheLoopIsKnownUrgentItemsLeaveFromOneLoopTaskWithEverythingAddedBeforeItRuns() {
        Coalescer<String> c = coalescer(1000);
        ManualLoop loop = new ManualLoop();
        c.sendOn(loop);

        c.add("append-g1", true);
        c.add("append-g2", true);
        c.add("hb-g3", false);
        assertTrue(batches.isEmpty(), "nothing leaves on the adding threads");
        assertEquals(1, loop.tasks.size(), "one task for the lot");
        assertTrue(scheduler.tasks.isEmpty(), "the heartbeat rides along instead of scheduling a flush");

        loop.runAll();

        assertEquals(List.of(List.of("append-g1", "append-g2", "hb-g3")), batches);
        c.add("append-g4", true);
        assertEquals(1, loop.tasks.size(), "the next item after the batch left posts a new task");
        loop.runAll();
        assertEquals(List.of("append-g4"), batches.get(1));
    }

    @Test
    void aLoopThatRefusesTheTaskLeavesTheItemToTheAddingThreadFromThenOn() {
        Coalescer<String> c = coalescer(1000);
        ManualLoop loop = new ManualLoop();
        loop.refusing = true;
        c.sendOn(loop);

        c.add("vote", true);
        assertEquals(List.of(List.of("vote")), batches, "sent at once, as without a loop");

        loop.refusing = false;
        c.add("vote2", true);
        assertEquals(List.of("vote2"), batches.get(1), "the refusing loop is not asked again");
        assertTrue(loop.tasks.isEmpty());
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
