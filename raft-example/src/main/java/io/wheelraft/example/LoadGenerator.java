package io.wheelraft.example;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client load for chaos runs, the demo and the benchmark: {@code concurrency} independent
 * increments by one kept outstanding at all times through one shared {@code RaftClient} (its async
 * API: each finished increment starts the next; no thread per request, no batching in the
 * application). It counts every outcome, so after {@link #stop()} the counter must lie between the
 * acknowledged increments and that plus the unknown ones (and equal the acknowledged count when
 * nothing is unknown). {@link #watchFirstAck} reports the first acknowledgement after a moment,
 * e.g. a kill.
 *
 * <p>Thread-safe. What a benchmark reports is counted in one {@link MeasuredWindow} fixed in
 * advance ({@link #measure}); latencies are kept only when asked for.
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

    /**
     * Counts acknowledgements served by {@code endpoint} of increments invoked after
     * {@code invokedAfterNanos} and returned after {@code returnedAfterNanos}.
     */
    record AckCount(String endpoint, long invokedAfterNanos, long returnedAfterNanos) {
        boolean counts(String servedBy, long invoked, long returned) {
            return endpoint.equals(servedBy) && invoked - invokedAfterNanos > 0 && returned - returnedAfterNanos > 0;
        }
    }

    /** One per group the load spreads over; each increment goes to one picked at random. */
    private final List<CounterClient> clients;
    private final int concurrency;
    private final long timeoutMs;
    private final boolean recordLatency;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong unknown = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong lastAckNanos = new AtomicLong();
    private final List<String> firstProblems = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicLong acksFromWatched = new AtomicLong();
    private volatile CountDownLatch slotsDone;
    private volatile boolean running;
    /** The measured window; null (nothing measured) until {@link #measure} is called. */
    private volatile MeasuredWindow window;
    private volatile AckWatch watch;
    /** Whose acknowledgements {@link #acksFromWatched()} counts, and since when; null: nobody's. */
    private volatile AckCount ackCount;
    private volatile OperationLog operationLog = OperationLog.NONE;

    LoadGenerator(ClusterChannels cluster, int concurrency, long timeoutMs, long attemptTimeoutMs, boolean recordLatency) {
        this(cluster, List.of(CounterServiceImpl.GROUP_ID), concurrency, timeoutMs, attemptTimeoutMs, recordLatency);
    }

    /** Load spread over counter groups {@code groupIds}: each increment goes to one of them at random. */
    LoadGenerator(ClusterChannels cluster, List<String> groupIds, int concurrency, long timeoutMs, long attemptTimeoutMs, boolean recordLatency) {
        if (concurrency <= 0) {
            throw new IllegalArgumentException("concurrency must be positive, was " + concurrency);
        }
        if (groupIds.isEmpty()) {
            throw new IllegalArgumentException("the load needs at least one group");
        }
        this.clients = groupIds.stream().map(g -> new CounterClient(cluster, g, timeoutMs, attemptTimeoutMs)).toList();
        this.concurrency = concurrency;
        this.timeoutMs = timeoutMs;
        this.recordLatency = recordLatency;
    }

    void start() {
        running = true;
        slotsDone = new CountDownLatch(concurrency);
        for (int i = 0; i < concurrency; i++) {
            next(i);
        }
    }

    /** Records every increment's invocation and outcome from now on (e.g. for a linearizability check). */
    void logOperations(OperationLog log) {
        operationLog = log == null ? OperationLog.NONE : log;
    }

    /** Starts slot {@code id}'s next increment; its completion starts the one after. */
    private void next(int id) {
        if (!running) {
            slotsDone.countDown();
            return;
        }
        OperationLog log = operationLog;
        Object op = log.invoked(id);
        long start = System.nanoTime();
        CounterClient client = clients.size() == 1 ? clients.get(0) : clients.get(java.util.concurrent.ThreadLocalRandom.current().nextInt(clients.size()));
        client.incrAsync(1).whenComplete((o, error) -> {
            if (error != null) {
                log.unknown(op, System.nanoTime() - start);
                unknown.incrementAndGet(); // incrAsync turns failures into outcomes; anything else is unexplained
                note("unknown (client error) " + error);
            } else {
                log.returned(op, o, System.nanoTime() - start);
                finished(id, start, o);
            }
            next(id);
        });
    }

    private void finished(int id, long start, CounterClient.Outcome o) {
        long end = System.nanoTime();
        switch (o.kind()) {
            case OK -> {
                acked.incrementAndGet();
                lastAckNanos.set(end);
                AckWatch w = watch;
                if (w != null && end - w.sinceNanos > 0 && !o.servedBy().equals(w.excluded)) {
                    w.firstAckNanos.complete(end);
                }
                AckCount count = ackCount;
                if (count != null && count.counts(o.servedBy(), start, end)) {
                    acksFromWatched.incrementAndGet();
                }
                MeasuredWindow measured = window;
                if (measured != null) {
                    measured.acknowledged(id, start, end);
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

    private void note(String problem) {
        if (firstProblems.size() < 10) {
            firstProblems.add(problem);
        }
    }

    /** Starts watching for the first acknowledgement after now from a node other than {@code excluded} (null: any). */
    AckWatch watchFirstAck(long sinceNanos, String excluded) {
        AckWatch w = new AckWatch(sinceNanos, excluded == null ? "" : excluded);
        watch = w;
        return w;
    }

    /**
     * Counts acknowledgements served by {@code endpoint} that return after {@code sinceNanos} (see
     * {@link #acksFromWatched()}); null stops counting.
     */
    void countAcksFrom(String endpoint, long sinceNanos) {
        acksFromWatched.set(0);
        ackCount = endpoint == null ? null : new AckCount(endpoint, Long.MIN_VALUE / 2, sinceNanos);
    }

    /**
     * Counts acknowledgements served by {@code endpoint} of increments invoked after
     * {@code invokedAfterNanos}, whenever they return (see {@link #acksFromWatched()}). The
     * invocation, not the return, proves when the server answered: an answer sent just before a
     * partition may reach the client only when it heals (TCP resends it), but the answer to an
     * increment invoked after a moment was certainly sent after it.
     */
    void countAcksInvokedAfter(String endpoint, long invokedAfterNanos) {
        acksFromWatched.set(0);
        ackCount = new AckCount(endpoint, invokedAfterNanos, Long.MIN_VALUE / 2);
    }

    long acksFromWatched() {
        return acksFromWatched.get();
    }

    /**
     * Measures the window {@code [fromNanos, untilNanos]} (System.nanoTime), both bounds fixed now:
     * increments acknowledged before (the warm-up) or after it are not counted. Read the returned
     * window after {@link #stop()}.
     */
    MeasuredWindow measure(long fromNanos, long untilNanos) {
        MeasuredWindow w = new MeasuredWindow(concurrency, fromNanos, untilNanos, recordLatency);
        window = w;
        return w;
    }

    /** Asks every slot to stop after its current increment and waits for them (each ends within the client timeout). */
    void stop() throws InterruptedException {
        running = false;
        CountDownLatch done = slotsDone;
        if (done != null && !done.await(timeoutMs + 5000, TimeUnit.MILLISECONDS)) {
            note("some increments had not ended " + (timeoutMs + 5000) + " ms after the load stopped");
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

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
