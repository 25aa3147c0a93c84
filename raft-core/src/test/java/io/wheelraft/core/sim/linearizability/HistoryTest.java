package io.wheelraft.core.sim.linearizability;

import io.wheelraft.core.sim.linearizability.CheckResult.Outcome;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.wheelraft.core.sim.linearizability.CounterModel.get;
import static io.wheelraft.core.sim.linearizability.CounterModel.incr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HistoryTest {

    private static final Duration LIMIT = Duration.ofSeconds(30);

    @Test
    void recordsTimesFromTheClockAndOutcomes() {
        long[] now = {10};
        History<CounterModel.Input, Long> history = new History<>(() -> now[0]);
        History.Invocation a = history.invoke(1, incr(2));
        now[0] = 15;
        History.Invocation b = history.invoke(2, get());
        History.Invocation c = history.invoke(3, incr(1));
        History.Invocation d = history.invoke(4, incr(7));
        now[0] = 20;
        history.complete(a, 2L);
        history.timeout(b);
        history.fail(d);

        List<Operation<CounterModel.Input, Long>> ops = history.operations();
        assertEquals(3, ops.size(), "the failed operation is left out");
        assertEquals("client 1: incr(2) -> 2 [invoked 10, completed 20]", ops.get(0).toString());
        assertFalse(ops.get(1).outcomeKnown());
        assertEquals(Operation.NEVER, ops.get(1).completeTime());
        assertFalse(ops.get(2).outcomeKnown(), "a still pending operation counts as unknown");
        assertEquals(4, history.size());
    }

    @Test
    void eventsAtTheSameClockReadingAreOrderedAsRecorded() {
        History<CounterModel.Input, Long> history = new History<>(() -> 0);
        History.Invocation w = history.invoke(1, incr(1));
        history.complete(w, 1L);
        History.Invocation r = history.invoke(2, get());
        history.complete(r, 0L);
        CheckResult<CounterModel.Input, Long> result = LinearizabilityChecker.check(CounterModel.INSTANCE, history, LIMIT);
        assertEquals(Outcome.NOT_LINEARIZABLE, result.outcome(), "the read started after the increment completed");
    }

    @Test
    void outcomeCanBeRecordedOnlyOnce() {
        History<CounterModel.Input, Long> history = new History<>(() -> 0);
        History.Invocation a = history.invoke(1, incr(1));
        history.complete(a, 1L);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> history.timeout(a));
        assertTrue(e.getMessage().contains("incr(1)"), e.getMessage());
    }

    @Test
    void invocationOfAnotherHistoryIsRejected() {
        History<CounterModel.Input, Long> one = new History<>(() -> 0);
        History<CounterModel.Input, Long> other = new History<>(() -> 0);
        History.Invocation a = one.invoke(1, incr(1));
        assertThrows(IllegalArgumentException.class, () -> other.complete(a, 1L));
    }

    @Test
    void clockGoingBackwardsIsRejected() {
        long[] now = {5};
        History<CounterModel.Input, Long> history = new History<>(() -> now[0]);
        history.invoke(1, incr(1));
        now[0] = 4;
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> history.invoke(2, get()));
        assertTrue(e.getMessage().contains("5") && e.getMessage().contains("4"), e.getMessage());
    }

    @Test
    void concurrentClientsRecordALinearizableHistoryOfAnAtomicCounter() throws Exception {
        AtomicLong counter = new AtomicLong();
        AtomicLong clock = new AtomicLong();
        History<CounterModel.Input, Long> history = new History<>(clock::incrementAndGet);
        int clients = 4;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 500; i++) {
                        if (i % 3 == 0) {
                            History.Invocation inv = history.invoke(client, get());
                            history.complete(inv, counter.get());
                        } else {
                            History.Invocation inv = history.invoke(client, incr(1));
                            history.complete(inv, counter.incrementAndGet());
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        CheckResult<CounterModel.Input, Long> result = LinearizabilityChecker.check(CounterModel.INSTANCE, history, LIMIT);
        assertEquals(Outcome.LINEARIZABLE, result.outcome(), result.explanation());
        assertEquals(2000, result.linearization().size());
    }
}
