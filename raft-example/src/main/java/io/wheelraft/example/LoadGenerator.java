package io.wheelraft.example;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client load for chaos runs, the demo and the benchmark: {@code concurrency} threads, each with
 * its own {@link CounterClient} (its own client id), incrementing by one in a loop. It counts
 * every outcome, so after {@link #stop()} the counter must lie between the acknowledged
 * increments and that plus the unknown ones (and equal the acknowledged count when nothing is
 * unknown). {@link #watchFirstAck} reports the first acknowledgement after a moment, e.g. a kill.
 *
 * <p>Thread-safe. Latencies (nanoseconds) are kept only when asked for, per worker, so recording
 * needs no lock.
 */
final class LoadGenerator implements AutoCloseable {

    /** Waits for the first acknowledgement after {@code sinceNanos} from a node other than {@code excluded}. */
    static final class AckWatch {
        final long sinceNanos;
        final String excluded;
        final CompletableFuture<Long> firstAckNanos = new CompletableFuture<>();

        AckWatch(long sinceNanos, String excluded) {
            this.sinceNanos = sinceNanos;
            this.excluded = excluded;
        }
    }

    private final ClusterChannels cluster;
    private final int concurrency;
    private final long timeoutMs;
    private final long attemptTimeoutMs;
    private final boolean recordLatency;
    private final List<Thread> workers = new ArrayList<>();
    private final List<long[]> latencies = new ArrayList<>();
    private final int[] latencyCounts;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong unknown = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong lastAckNanos = new AtomicLong();
    private final List<String> firstProblems = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean running;
    private volatile long measureFromNanos = System.nanoTime();
    private volatile AckWatch watch;
    private volatile String countAcksFrom;
    private volatile long countAcksSinceNanos;
    private final AtomicLong acksFromWatched = new AtomicLong();
    private volatile OperationLog operationLog = OperationLog.NONE;

    LoadGenerator(ClusterChannels cluster, int concurrency, long timeoutMs, long attemptTimeoutMs, boolean recordLatency) {
        if (concurrency <= 0) {
            throw new IllegalArgumentException("concurrency must be positive, was " + concurrency);
        }
        this.cluster = cluster;
        this.concurrency = concurrency;
        this.timeoutMs = timeoutMs;
        this.attemptTimeoutMs = attemptTimeoutMs;
        this.recordLatency = recordLatency;
        this.latencyCounts = new int[concurrency];
    }

    void start() {
        running = true;
        for (int i = 0; i < concurrency; i++) {
            int id = i;
            latencies.add(new long[1 << 16]);
            Thread t = new Thread(() -> work(id), "load-" + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
    }

    private void work(int id) {
        CounterClient client = new CounterClient(cluster, timeoutMs, attemptTimeoutMs);
        while (running) {
            OperationLog log = operationLog;
            Object op = log.invoked(id);
            long start = System.nanoTime();
            CounterClient.Outcome o;
            try {
                o = client.incr(1);
            } catch (RuntimeException e) {
                log.unknown(op, System.nanoTime() - start);
                if (!running) {
                    return;
                }
                // The client never throws for outcomes; anything here means the command's fate is unknown.
                unknown.incrementAndGet();
                note("unknown (client error) " + e);
                continue;
            }
            long end = System.nanoTime();
            log.returned(op, o, end - start);
            switch (o.kind()) {
                case OK -> {
                    acked.incrementAndGet();
                    lastAckNanos.set(end);
                    AckWatch w = watch;
                    if (w != null && end - w.sinceNanos > 0 && !o.servedBy().equals(w.excluded)) {
                        w.firstAckNanos.complete(end);
                    }
                    String from = countAcksFrom;
                    if (from != null && from.equals(o.servedBy()) && end - countAcksSinceNanos > 0) {
                        acksFromWatched.incrementAndGet();
                    }
                    if (recordLatency && start - measureFromNanos >= 0) {
                        record(id, end - start);
                    }
                }
                case FAIL -> {
                    failed.incrementAndGet();
                    note(o.line());
                }
                case UNKNOWN -> {
                    unknown.incrementAndGet();
                    note(o.line());
                }
            }
        }
    }

    private void record(int id, long nanos) {
        long[] a = latencies.get(id);
        int n = latencyCounts[id];
        if (n == a.length) {
            a = java.util.Arrays.copyOf(a, a.length * 2);
            latencies.set(id, a);
        }
        a[n] = nanos;
        latencyCounts[id] = n + 1;
    }

    private void note(String problem) {
        if (firstProblems.size() < 10) {
            firstProblems.add(problem);
        }
    }

    /** Records every increment's invocation and outcome from now on (e.g. for a linearizability check). */
    void logOperations(OperationLog log) {
        operationLog = log == null ? OperationLog.NONE : log;
    }

    /** Starts watching for the first acknowledgement after now from a node other than {@code excluded} (null: any). */
    AckWatch watchFirstAck(long sinceNanos, String excluded) {
        AckWatch w = new AckWatch(sinceNanos, excluded == null ? "" : excluded);
        watch = w;
        return w;
    }

    /** Counts acknowledgements served by {@code endpoint} from now on (see {@link #acksFromWatched()}). */
    void countAcksFrom(String endpoint, long sinceNanos) {
        acksFromWatched.set(0);
        countAcksSinceNanos = sinceNanos;
        countAcksFrom = endpoint;
    }

    long acksFromWatched() {
        return acksFromWatched.get();
    }

    /** Records latencies only of commands started from now on (after a warm-up). */
    void measureFrom(long nanos) {
        measureFromNanos = nanos;
    }

    /** Asks every worker to stop after its current command and waits for them (each finishes within the client timeout). */
    void stop() throws InterruptedException {
        running = false;
        for (Thread t : workers) {
            t.join(timeoutMs + 5000);
        }
    }

    long acked() {
        return acked.get();
    }

    long unknown() {
        return unknown.get();
    }

    long failed() {
        return failed.get();
    }

    long lastAckNanos() {
        return lastAckNanos.get();
    }

    List<String> problems() {
        return List.copyOf(firstProblems);
    }

    /** All recorded latencies in nanoseconds, sorted; call after {@link #stop()}. */
    long[] sortedLatencies() {
        int total = 0;
        for (int c : latencyCounts) {
            total += c;
        }
        long[] all = new long[total];
        int pos = 0;
        for (int i = 0; i < concurrency; i++) {
            System.arraycopy(latencies.get(i), 0, all, pos, latencyCounts[i]);
            pos += latencyCounts[i];
        }
        java.util.Arrays.sort(all);
        return all;
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
