package io.wheelraft.example;

import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.History;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a chaos run saw, as it happened: every client increment's call and return (a {@link History}
 * for the linearizability check, bounded to {@code maxOps} operations so a long run cannot exhaust
 * the heap), acknowledged operations and their latencies per 100 ms for the timeline, and the
 * run's events (faults, restarts, leader changes) on the same clock.
 *
 * <p>Thread-safe: the load's workers, the cluster watch and the runner record concurrently; reads
 * return copies.
 */
final class ChaosRecorder implements OperationLog {

    /** Width of one timeline bucket. */
    static final long BUCKET_NANOS = 100_000_000L;

    /** What kind of moment an {@link Event} marks. */
    enum EventKind { FAULT, RECOVERY, LEADER }

    /** A moment of the run, {@code seconds} after its start. */
    record Event(double seconds, EventKind kind, String label) {
    }

    /** One 100 ms bucket: acknowledged increments, other outcomes, and latency percentiles of the acknowledged ones (ms). */
    record Bucket(double startSeconds, int acked, int notAcked, double p50Ms, double p99Ms, double maxMs) {
    }

    /** {@code outcomeKept}: false for an increment recorded past the bound, whose outcome counts as unknown. */
    private record Op(History.Invocation invocation, boolean outcomeKept) {
    }

    private final long originNanos;
    private final int maxOps;
    private final History<CounterModel.Input, Long> history;
    private final List<Event> events = new ArrayList<>();
    private final List<long[]> latencies = new ArrayList<>();
    private final List<int[]> counts = new ArrayList<>();
    private long dropped;
    /**
     * Increments recorded with their outcome and not yet returned: past the bound, new ones are
     * still recorded (with an unknown outcome) while any of these is in flight.
     */
    private int inFlight;

    ChaosRecorder(long originNanos, int maxOps) {
        this.originNanos = originNanos;
        this.maxOps = maxOps;
        this.history = new History<>(() -> Math.max(0, System.nanoTime() - originNanos));
    }

    /** Seconds since the run started. */
    double now() {
        return (System.nanoTime() - originNanos) / 1e9;
    }

    double secondsAt(long nanos) {
        return (nanos - originNanos) / 1e9;
    }

    synchronized void event(EventKind kind, String label) {
        events.add(new Event(now(), kind, label));
    }

    synchronized void eventAt(long nanos, EventKind kind, String label) {
        events.add(new Event(secondsAt(nanos), kind, label));
        events.sort((a, b) -> Double.compare(a.seconds(), b.seconds()));
    }

    /**
     * Past the bound an increment is still recorded, with an unknown outcome, while an increment of
     * the history is in flight: it may have been applied before that one returned, so the value
     * that one saw may include it. Once none is in flight, later increments cannot show in any
     * recorded answer and are dropped.
     */
    @Override
    public Object invoked(int worker) {
        boolean outcomeKept;
        synchronized (this) {
            outcomeKept = history.size() < maxOps;
            if (!outcomeKept && inFlight == 0) {
                dropped++;
                return null;
            }
            if (outcomeKept) {
                inFlight++;
            }
        }
        return new Op(history.invoke(worker, CounterModel.incr(1)), outcomeKept);
    }

    @Override
    public void returned(Object op, CounterClient.Outcome outcome, long latencyNanos) {
        if (op instanceof Op o) {
            if (!o.outcomeKept()) {
                history.timeout(o.invocation());
                count(outcome.ok(), latencyNanos);
                return;
            }
            synchronized (this) {
                inFlight--;
            }
            switch (outcome.kind()) {
                case OK -> history.complete(o.invocation(), outcome.value());
                case FAIL -> history.fail(o.invocation());
                case UNKNOWN -> history.timeout(o.invocation());
            }
        }
        count(outcome.ok(), latencyNanos);
    }

    @Override
    public void unknown(Object op, long latencyNanos) {
        if (op instanceof Op o) {
            if (o.outcomeKept()) {
                synchronized (this) {
                    inFlight--;
                }
            }
            history.timeout(o.invocation());
        }
        count(false, latencyNanos);
    }

    /**
     * Records a linearizable read of the final value, so the check covers it too; not when
     * increments were dropped from the history, since the value counts them.
     */
    void finalRead(Long value) {
        synchronized (this) {
            if (dropped > 0) {
                return;
            }
        }
        History.Invocation inv = history.invoke(Integer.MAX_VALUE, CounterModel.get());
        if (value == null) {
            history.timeout(inv);
        } else {
            history.complete(inv, value);
        }
    }

    private synchronized void count(boolean ok, long latencyNanos) {
        int b = (int) ((System.nanoTime() - originNanos) / BUCKET_NANOS);
        while (counts.size() <= b) {
            counts.add(new int[2]);
            latencies.add(new long[8]);
        }
        int[] c = counts.get(b);
        if (ok) {
            long[] l = latencies.get(b);
            if (c[0] == l.length) {
                l = Arrays.copyOf(l, l.length * 2);
                latencies.set(b, l);
            }
            l[c[0]++] = latencyNanos;
        } else {
            c[1]++;
        }
    }

    History<CounterModel.Input, Long> history() {
        return history;
    }

    /** Increments not recorded in the history because it was full. */
    synchronized long droppedFromHistory() {
        return dropped;
    }

    int maxOps() {
        return maxOps;
    }

    synchronized List<Event> events() {
        return List.copyOf(events);
    }

    synchronized List<Bucket> buckets() {
        List<Bucket> out = new ArrayList<>(counts.size());
        for (int i = 0; i < counts.size(); i++) {
            int[] c = counts.get(i);
            long[] l = Arrays.copyOf(latencies.get(i), c[0]);
            Arrays.sort(l);
            double p50 = l.length == 0 ? Double.NaN : Stats.rank(l, 0.50) / 1e6;
            double p99 = l.length == 0 ? Double.NaN : Stats.rank(l, 0.99) / 1e6;
            double max = l.length == 0 ? Double.NaN : l[l.length - 1] / 1e6;
            out.add(new Bucket(i * (BUCKET_NANOS / 1e9), c[0], c[1], p50, p99, max));
        }
        return out;
    }
}
