package io.wheelraft.core.node;

import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProposalBufferTest {

    /** A lane the test runs by hand, so batching is observable. */
    private final Queue<Runnable> lane = new ArrayDeque<>();
    private final List<List<Task>> batches = new ArrayList<>();

    private static Task task(int n) {
        return new Task(ByteBuffer.allocate(4).putInt(0, n), null);
    }

    private void runLane() {
        Runnable r;
        while ((r = lane.poll()) != null) {
            r.run();
        }
    }

    @Test
    void tasksOfferedBeforeTheLaneRunsArriveAsOneBatchInOrder() {
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, batches::add);
        List<Task> offered = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Task t = task(i);
            offered.add(t);
            assertTrue(buffer.offer(t));
        }
        assertEquals(1, lane.size(), "one drain posted for the whole burst");
        runLane();
        assertEquals(List.of(offered), batches);
        assertEquals(0, buffer.size());
    }

    @Test
    void withNothingInFlightTheCallerRunsTheDrainItself() {
        boolean[] idle = {true};
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, Runnable::run, () -> idle[0], () -> null, batches::add);
        Task first = task(1);
        assertTrue(buffer.offer(first));
        assertEquals(List.of(List.of(first)), batches, "proposed on the caller's thread, no lane hop");
        assertTrue(lane.isEmpty());

        idle[0] = false; // now an entry is waiting for commit: batch behind the lane hand-off
        Task second = task(2);
        Task third = task(3);
        assertTrue(buffer.offer(second));
        assertTrue(buffer.offer(third));
        assertEquals(1, batches.size(), "nothing proposed until the lane runs");
        assertEquals(1, lane.size());
        runLane();
        assertEquals(List.of(second, third), batches.get(1), "the two calls made while busy form one batch");
    }

    @Test
    void aDrainAlreadyPostedToTheLaneIsNotRunAgainInline() {
        boolean[] idle = {false};
        List<Runnable> inline = new ArrayList<>();
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, inline::add, () -> idle[0], () -> null, batches::add);
        assertTrue(buffer.offer(task(1)));
        idle[0] = true;
        assertTrue(buffer.offer(task(2)));
        assertTrue(inline.isEmpty(), "the pending lane drain takes the second task too");
        runLane();
        assertEquals(1, batches.size());
        assertEquals(2, batches.get(0).size());
    }

    @Test
    void onAnEventLoopABusyPipeDrainWaitsForTheLoopsCurrentReadsInsteadOfALaneThread() {
        Queue<Runnable> loop = new ArrayDeque<>(); // the calling event loop's task queue
        List<Runnable> laneHere = new ArrayList<>();
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, laneHere::add, () -> false, () -> loop::add, batches::add);
        Task first = task(1);
        Task second = task(2);
        assertTrue(buffer.offer(first));
        assertTrue(buffer.offer(second)); // the same read delivers a second request
        assertTrue(lane.isEmpty(), "no lane thread is woken");
        assertTrue(laneHere.isEmpty(), "nothing proposed while the loop is still reading");
        assertEquals(1, loop.size(), "one deferred drain for the burst");

        loop.poll().run(); // the loop finished its reads and runs its tasks
        assertEquals(1, laneHere.size(), "the drain goes to the lane from the loop's own thread");
        laneHere.get(0).run();
        assertEquals(List.of(List.of(first, second)), batches);
    }

    @Test
    void onAnEventLoopAnIdlePipelineStillGathersTheWholeReadIntoOneBatch() {
        Queue<Runnable> loop = new ArrayDeque<>();
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, Runnable::run, () -> true, () -> loop::add, batches::add);
        List<Task> read = List.of(task(1), task(2), task(3)); // one client message carrying three calls
        for (Task t : read) {
            assertTrue(buffer.offer(t));
        }
        assertTrue(batches.isEmpty(), "the first call is not proposed alone while the loop is still reading");
        assertTrue(lane.isEmpty(), "no lane thread is woken");
        assertEquals(1, loop.size());

        loop.poll().run();
        assertEquals(List.of(read), batches, "the whole read is one proposal");
    }

    @Test
    void aClosingEventLoopWithAnIdlePipelineRunsTheDrainOnTheCaller() {
        Executor closing = r -> {
            throw new RejectedExecutionException("event loop shut down");
        };
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, Runnable::run, () -> true, () -> closing, batches::add);
        Task t = task(1);
        assertTrue(buffer.offer(t));
        assertEquals(List.of(List.of(t)), batches, "proposed at once on the idle lane, not stranded");
        assertTrue(lane.isEmpty());
    }

    @Test
    void aClosingEventLoopHandsTheDrainToTheLane() {
        Executor closing = r -> {
            throw new RejectedExecutionException("event loop shut down");
        };
        ProposalBuffer buffer = new ProposalBuffer(16, lane::add, Runnable::run, () -> false, () -> closing, batches::add);
        Task t = task(1);
        assertTrue(buffer.offer(t));
        assertEquals(1, lane.size(), "the drain is not lost with the loop");
        runLane();
        assertEquals(List.of(List.of(t)), batches);
    }

    @Test
    void refusesPastCapacityAndAcceptsAgainOnceDrained() {
        ProposalBuffer buffer = new ProposalBuffer(3, lane::add, batches::add);
        assertTrue(buffer.offer(task(1)));
        assertTrue(buffer.offer(task(2)));
        assertTrue(buffer.offer(task(3)));
        assertFalse(buffer.offer(task(4)), "full");
        assertEquals(3, buffer.size());
        runLane();
        assertEquals(1, batches.size());
        assertEquals(3, batches.get(0).size());
        assertTrue(buffer.offer(task(5)));
        runLane();
        assertEquals(2, batches.size());
    }

    @Test
    void aBurstLargerThanOneBatchIsSplitWithoutLosingAny() {
        int n = ProposalBuffer.MAX_BATCH * 2 + 7;
        ProposalBuffer buffer = new ProposalBuffer(n, lane::add, batches::add);
        for (int i = 0; i < n; i++) {
            assertTrue(buffer.offer(task(i)));
        }
        runLane();
        assertEquals(3, batches.size());
        assertEquals(ProposalBuffer.MAX_BATCH, batches.get(0).size());
        int seen = 0;
        for (List<Task> b : batches) {
            for (Task t : b) {
                assertEquals(seen++, t.data().getInt(0));
            }
        }
        assertEquals(n, seen);
    }

    @Test
    void concurrentOffersAreAllDeliveredExactlyOnce() throws Exception {
        ExecutorService laneThread = Executors.newSingleThreadExecutor();
        List<Task> delivered = new ArrayList<>(); // touched only on the lane thread
        ProposalBuffer buffer = new ProposalBuffer(1 << 20, laneThread, delivered::addAll);
        int threads = 4;
        int perThread = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < threads; p++) {
            int base = p * perThread;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    assertTrue(buffer.offer(task(base + i)));
                }
            });
            producers.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : producers) {
            t.join();
        }
        // Every drain still needed is on the lane by now (a drain re-posts itself when it leaves
        // tasks behind), so a marker task queued after the buffer empties runs after the last one.
        for (int round = 0; buffer.size() > 0 && round < 10_000; round++) {
            CountDownLatch turn = new CountDownLatch(1);
            laneThread.execute(turn::countDown);
            assertTrue(turn.await(30, TimeUnit.SECONDS));
        }
        CountDownLatch last = new CountDownLatch(1);
        laneThread.execute(last::countDown);
        assertTrue(last.await(30, TimeUnit.SECONDS));
        laneThread.shutdown();
        boolean[] seen = new boolean[threads * perThread];
        for (Task t : delivered) {
            int n = t.data().getInt(0);
            assertFalse(seen[n], "delivered twice: " + n);
            seen[n] = true;
        }
        assertEquals(threads * perThread, delivered.size());
        assertEquals(0, buffer.size());
    }

    @Test
    void capacityMustBePositive() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ProposalBuffer(0, lane::add, batches::add));
        assertTrue(e.getMessage().contains("capacity"));
    }
}
