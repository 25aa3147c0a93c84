package io.wheelraft.bench;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A closed-loop load: {@code inFlight} clients, each sending one increment and sending the next as
 * soon as the answer arrives, so exactly {@code inFlight} requests are outstanding at any time. A
 * failed request is counted and its client tries again after a short pause (so a leader change
 * does not become a busy loop).
 *
 * <p>Measurement: after {@code settle} of unmeasured load, requests that both start and finish in
 * the next {@code measure} window go into the latency histogram; ops/s counts acknowledgements
 * arriving in the window. Thread-safe; one {@link #run} per instance.
 */
final class ClosedLoopLoad {

    /** What one run measured. Latencies in microseconds. */
    record Measurement(long acknowledged, long failed, double seconds, Histogram latencyMicros) {
        double opsPerSecond() {
            return acknowledged / seconds;
        }

        double percentileMillis(double percentile) {
            return latencyMicros.getTotalCount() == 0 ? Double.NaN : latencyMicros.getValueAtPercentile(percentile) / 1000.0;
        }
    }

    private static final long RETRY_PAUSE_MS = 10;

    private final CounterClient client;
    private final int inFlight;
    private final ConcurrentHistogram latencies = new ConcurrentHistogram(TimeUnit.SECONDS.toMicros(60), 3);
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "load-retry");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean running;
    private volatile boolean windowSet;
    private volatile long windowStart;
    private volatile long windowEnd;
    private CountDownLatch drained;

    ClosedLoopLoad(CounterClient client, int inFlight) {
        if (inFlight <= 0 || inFlight > CounterClient.MAX_SLOTS) {
            throw new IllegalArgumentException("in-flight count must be in 1.." + CounterClient.MAX_SLOTS + ", was " + inFlight);
        }
        this.client = client;
        this.inFlight = inFlight;
    }

    /** What the caller samples at the window's two ends (server CPU, the host's steal), so that it covers the window alone. */
    interface WindowEdges {
        WindowEdges NONE = new WindowEdges() {
            @Override
            public void opened() {
            }

            @Override
            public void closed() {
            }
        };

        /** Called as the window opens, after the settling period. */
        void opened();

        /** Called as the window closes, before the requests still outstanding are waited for. */
        void closed();
    }

    /** Runs the load for {@code settleMs + measureMs}, then waits for every outstanding request. */
    Measurement run(long settleMs, long measureMs) throws InterruptedException {
        return run(settleMs, measureMs, WindowEdges.NONE);
    }

    /** As {@link #run(long, long)}, telling {@code edges} when the measured window opens and closes. */
    Measurement run(long settleMs, long measureMs, WindowEdges edges) throws InterruptedException {
        drained = new CountDownLatch(inFlight);
        running = true;
        for (int slot = 0; slot < inFlight; slot++) {
            issue(slot);
        }
        Thread.sleep(settleMs); // unmeasured settling period: a fixed length of time, not a condition
        edges.opened();
        long start = System.nanoTime();
        windowStart = start;
        windowEnd = start + TimeUnit.MILLISECONDS.toNanos(measureMs);
        windowSet = true;
        Thread.sleep(measureMs); // the measured window itself
        running = false;
        edges.closed();
        boolean allBack = drained.await(30, TimeUnit.SECONDS);
        retries.shutdownNow();
        if (!allBack) {
            throw new IllegalStateException(drained.getCount() + " of " + inFlight + " requests never completed");
        }
        return new Measurement(acknowledged.get(), failed.get(), measureMs / 1000.0, latencies.copy());
    }

    private void issue(int slot) {
        long sent = System.nanoTime();
        client.increment(slot).whenComplete((value, error) -> completed(slot, sent, error));
    }

    private void completed(int slot, long sent, Throwable error) {
        long now = System.nanoTime();
        boolean inWindow = windowSet && now - windowStart >= 0 && now - windowEnd <= 0;
        if (error == null) {
            if (inWindow) {
                acknowledged.incrementAndGet();
                if (sent - windowStart >= 0) {
                    latencies.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(now - sent)));
                }
            }
        } else if (inWindow) {
            failed.incrementAndGet();
        }
        if (!running) {
            drained.countDown();
        } else if (error == null) {
            issue(slot);
        } else {
            try {
                retries.schedule(() -> issue(slot), RETRY_PAUSE_MS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                drained.countDown();
            }
        }
    }
}
