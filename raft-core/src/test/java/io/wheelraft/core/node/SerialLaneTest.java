package io.wheelraft.core.node;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SerialLaneTest {

    /** A pool the test runs by hand. */
    private final Queue<Runnable> pool = new ArrayDeque<>();

    private void runPool() {
        Runnable r;
        while ((r = pool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void executeRunsTasksInOrderOnThePool() {
        SerialLane lane = new SerialLane("t", pool::add);
        List<Integer> ran = new ArrayList<>();
        lane.execute(() -> ran.add(1));
        lane.execute(() -> ran.add(2));
        assertTrue(ran.isEmpty());
        assertEquals(1, pool.size(), "one drain for both");
        runPool();
        assertEquals(List.of(1, 2), ran);
    }

    @Test
    void executeHereRunsOnTheCallerWhenTheLaneIsIdle() {
        SerialLane lane = new SerialLane("t", pool::add);
        Thread[] ranOn = new Thread[1];
        lane.executeHere(() -> ranOn[0] = Thread.currentThread());
        assertSame(Thread.currentThread(), ranOn[0]);
        assertTrue(pool.isEmpty(), "no pool thread woken");
    }

    @Test
    void executeHereQueuesBehindWorkAlreadyScheduledAndKeepsOrder() {
        SerialLane lane = new SerialLane("t", pool::add);
        List<Integer> ran = new ArrayList<>();
        lane.execute(() -> ran.add(1));
        lane.executeHere(() -> ran.add(2)); // the lane is scheduled on the pool: must not overtake task 1
        assertTrue(ran.isEmpty());
        runPool();
        assertEquals(List.of(1, 2), ran);
    }

    @Test
    void aTaskThatPostsToItsOwnLaneHereDoesNotRunNested() {
        SerialLane lane = new SerialLane("t", pool::add);
        List<String> ran = new ArrayList<>();
        lane.executeHere(() -> {
            ran.add("outer start");
            lane.executeHere(() -> ran.add("inner"));
            ran.add("outer end");
        });
        runPool();
        assertEquals(List.of("outer start", "outer end", "inner"), ran);
    }

    @Test
    void concurrentCallersNeverRunTwoTasksAtOnceAndLoseNone() throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(2);
        SerialLane lane = new SerialLane("t", workers);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        int[] count = new int[1]; // touched only by lane tasks: a lost update shows a race
        int threads = 4;
        int perThread = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            boolean here = t % 2 == 0;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    Runnable task = () -> {
                        if (running.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        count[0]++;
                        running.decrementAndGet();
                    };
                    if (here) {
                        lane.executeHere(task);
                    } else {
                        lane.execute(task);
                    }
                }
            });
            callers.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : callers) {
            th.join();
        }
        CountDownLatch done = new CountDownLatch(1);
        int[] seen = new int[1];
        // Runs after every task queued before it.
        lane.execute(() -> {
            seen[0] = count[0];
            done.countDown();
        });
        assertTrue(done.await(30, TimeUnit.SECONDS));
        workers.shutdown();
        assertEquals(0, overlaps.get());
        assertEquals(threads * perThread, seen[0]);
    }

    @Test
    void aPausedLaneRunsNothingUntilResumedAndThenTheContinuationFirst() {
        SerialLane lane = new SerialLane("t", pool::add);
        List<String> ran = new ArrayList<>();
        lane.execute(() -> {
            ran.add("pausing task");
            lane.pauseAfterCurrentTask();
        });
        lane.execute(() -> ran.add("queued before the pause"));
        runPool();
        lane.execute(() -> ran.add("queued while paused"));
        lane.executeHere(() -> ran.add("offered here while paused"));
        runPool();
        assertEquals(List.of("pausing task"), ran, "a paused lane runs no queued task, on the pool or on a caller");
        assertTrue(pool.isEmpty(), "no drain is started while paused");

        lane.resumeWith(() -> ran.add("continuation"));
        runPool();
        assertEquals(List.of("pausing task", "continuation", "queued before the pause", "queued while paused",
                "offered here while paused"), ran);
    }

    @Test
    void aResumeThatComesBeforeThePausingTaskReturnsDoesNotStopTheLane() {
        SerialLane lane = new SerialLane("t", pool::add);
        List<String> ran = new ArrayList<>();
        lane.execute(() -> {
            lane.pauseAfterCurrentTask();
            lane.resumeWith(() -> ran.add("continuation")); // the slow thing finished at once
            ran.add("pausing task");
        });
        lane.execute(() -> ran.add("next"));
        runPool();
        assertEquals(List.of("pausing task", "continuation", "next"), ran);
        lane.execute(() -> ran.add("later"));
        runPool();
        assertEquals("later", ran.get(ran.size() - 1), "the lane runs normally afterwards");
    }

    @Test
    void aResumeFromAnotherThreadRacingThePauseNeverRunsTwoTasksAtOnceNorStrandsOne() throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(2);
        ExecutorService resumer = Executors.newSingleThreadExecutor();
        try {
            SerialLane lane = new SerialLane("t", workers);
            AtomicInteger running = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            int rounds = 2_000;
            CountDownLatch done = new CountDownLatch(rounds);
            Runnable guarded = () -> {
                if (running.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                running.decrementAndGet();
            };
            for (int i = 0; i < rounds; i++) {
                lane.execute(() -> {
                    guarded.run();
                    lane.pauseAfterCurrentTask();
                    resumer.execute(() -> lane.resumeWith(() -> {
                        guarded.run();
                        done.countDown();
                    }));
                });
            }
            assertTrue(done.await(30, TimeUnit.SECONDS), "every continuation ran; left: " + done.getCount());
            assertEquals(0, overlaps.get(), "two lane tasks ran at once");
        } finally {
            workers.shutdownNow();
            resumer.shutdownNow();
        }
    }
}
