package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Expired tasks handed to a task executor, for both timers. */
class TaskExecutorTest {

    @Test
    void hashedWheelRunsExpiredTasksOnTheExecutorAndLogsTheirExceptions() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "task-pool"));
        try {
            HashedWheelTimer timer = HashedWheelTimer.builder().taskExecutor(pool).build();
            checkRunsOnPool(timer);
            timer.stop();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void hierarchicalWheelRunsExpiredTasksOnTheExecutorAndLogsTheirExceptions() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "task-pool"));
        try {
            HierarchicalWheelTimer timer = HierarchicalWheelTimer.builder().taskExecutor(pool).build();
            checkRunsOnPool(timer);
            timer.stop();
        } finally {
            pool.shutdownNow();
        }
    }

    private static void checkRunsOnPool(Timer timer) throws InterruptedException {
        timer.newTimeout(t -> {
            throw new IllegalStateException("boom (expected by the test)");
        }, 1, TimeUnit.MILLISECONDS);
        CountDownLatch ran = new CountDownLatch(1);
        AtomicReference<String> thread = new AtomicReference<>();
        timer.newTimeout(t -> {
            thread.set(Thread.currentThread().getName());
            ran.countDown();
        }, 2, TimeUnit.MILLISECONDS);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertEquals("task-pool", thread.get());
    }

    @Test
    void rejectingExecutorDoesNotStopTheTimer() {
        ManualClock clock = new ManualClock();
        List<String> ran = new ArrayList<>();
        boolean[] reject = {true};
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(clock).taskExecutor(r -> {
            if (reject[0]) {
                throw new RejectedExecutionException("full (expected by the test)");
            }
            r.run();
        }).build();
        timer.newTimeout(t -> ran.add("rejected"), 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        reject[0] = false;
        timer.newTimeout(t -> ran.add("accepted"), 1, TimeUnit.MILLISECONDS);
        clock.advanceMillis(1);
        assertEquals(List.of("accepted"), ran);
        timer.stop();
    }

    @Test
    void stopFromATaskOnTheExecutorThrows() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            HashedWheelTimer timer = HashedWheelTimer.builder().taskExecutor(pool).build();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            timer.newTimeout(t -> {
                try {
                    timer.stop();
                } catch (Throwable e) {
                    thrown.set(e);
                }
                done.countDown();
            }, 1, TimeUnit.MILLISECONDS);
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
            timer.stop();
        } finally {
            pool.shutdownNow();
        }
    }
}
