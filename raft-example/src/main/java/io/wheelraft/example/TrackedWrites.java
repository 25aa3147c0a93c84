package io.wheelraft.example;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Increments by one to groups picked at random, {@code concurrency} kept outstanding (each
 * finished increment starts the next), counting per group how many were acknowledged, failed
 * (certainly not applied) and unknown (perhaps applied), so that afterwards each group's counter
 * can be checked against them ({@link LostWrites}). Increments are exactly-once
 * ({@link CounterClient}): a retried one is applied at most once.
 *
 * <p>Thread-safe: the counts are atomic; read them after {@link #stop()}.
 */
final class TrackedWrites {

    private final List<CounterClient> clients;
    private final int concurrency;
    private final long timeoutMs;
    private final AtomicLongArray acked;
    private final AtomicLongArray unknown;
    private final AtomicLongArray failed;
    private volatile boolean running;
    private volatile CountDownLatch slotsDone;

    /** @param groupIds the groups written; the counts are indexed as this list */
    TrackedWrites(ClusterChannels cluster, List<String> groupIds, int concurrency, long timeoutMs) {
        if (groupIds.isEmpty() || concurrency < 1) {
            throw new IllegalArgumentException("need groups and a positive concurrency, were " + groupIds.size() + " and " + concurrency);
        }
        // how long a silent leader is waited for before asking the others: the client's shortest
        this.clients = groupIds.stream().map(g -> new CounterClient(cluster, g, timeoutMs, CounterClient.MAX_SILENCE_MS)).toList();
        this.concurrency = concurrency;
        this.timeoutMs = timeoutMs;
        this.acked = new AtomicLongArray(groupIds.size());
        this.unknown = new AtomicLongArray(groupIds.size());
        this.failed = new AtomicLongArray(groupIds.size());
    }

    void start() {
        running = true;
        slotsDone = new CountDownLatch(concurrency);
        for (int i = 0; i < concurrency; i++) {
            next();
        }
    }

    private void next() {
        if (!running) {
            slotsDone.countDown();
            return;
        }
        int g = ThreadLocalRandom.current().nextInt(clients.size());
        clients.get(g).incrAsync(1).whenComplete((o, error) -> {
            if (error != null || o.kind() == CounterClient.Outcome.Kind.UNKNOWN) {
                unknown.incrementAndGet(g); // incrAsync turns failures into outcomes; anything else is unexplained
            } else if (o.kind() == CounterClient.Outcome.Kind.OK) {
                acked.incrementAndGet(g);
            } else {
                failed.incrementAndGet(g);
            }
            next();
        });
    }

    /**
     * Lets every slot finish its current increment and start no more; waits for them (each ends
     * within the client timeout).
     *
     * @return false if some had not ended in time (their counts are then incomplete)
     */
    boolean stop() throws InterruptedException {
        running = false;
        CountDownLatch done = slotsDone;
        return done == null || done.await(timeoutMs + 5_000, TimeUnit.MILLISECONDS);
    }

    long[] acked() {
        return copy(acked);
    }

    long[] unknown() {
        return copy(unknown);
    }

    long[] failed() {
        return copy(failed);
    }

    private static long[] copy(AtomicLongArray a) {
        long[] c = new long[a.length()];
        for (int i = 0; i < c.length; i++) {
            c[i] = a.get(i);
        }
        return c;
    }
}
