package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.rpc.proto.AppendEntriesFrame;
import io.wheelraft.rpc.proto.AppendEntriesResult;
import io.wheelraft.rpc.proto.RaftServiceGrpc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Pipelined AppendEntries to one remote endpoint: one long-lived bidirectional stream carries the
 * requests of every group of this process to that endpoint, in send order, with any number in
 * flight (bounded by the caller's in-flight byte budget). Answers are matched by call id; each call
 * has its own deadline. When the stream breaks, every call on it fails at once and the next call
 * opens a new stream.
 *
 * <p>Deadlines are kept by one sweep per pipe rather than one scheduled task per call: the sweep
 * is scheduled for the earliest deadline among the calls in flight, expires whatever is overdue
 * when it runs and reschedules itself for the next earliest, and stops when nothing is in flight.
 * A task per call woke the timer thread on every send (its deadline was the new earliest), about
 * one wake-up per AppendEntries; the sweep wakes about once per deadline period under load and
 * never when idle. Calls still expire at their own deadline.
 *
 * <p>Thread-safe: sends are serialized by a lock (that is what fixes their order); answers and
 * stream errors arrive on gRPC I/O threads.
 */
final class AppendEntriesPipe {

    /** Names the calls in errors: "AppendEntries to host:port". */
    private final String what;
    private final ManagedChannel channel;
    private final ScheduledExecutorService scheduler;
    private final BooleanSupplier transportClosed;
    /** Every answer on the stream is a sign of life of the endpoint. */
    private final EndpointLiveness liveness;
    private Stream current;
    /** The scheduled sweep (null: none) and when it runs; guarded by this pipe's lock. */
    private ScheduledFuture<?> sweep;
    private long sweepAtNanos;
    /** Bumped whenever a sweep is replaced, so a replaced one that already started does nothing. */
    private long sweepGeneration;

    AppendEntriesPipe(String endpoint, ManagedChannel channel, ScheduledExecutorService scheduler, BooleanSupplier transportClosed,
                      EndpointLiveness liveness) {
        this.what = "AppendEntries to " + endpoint;
        this.channel = channel;
        this.scheduler = scheduler;
        this.transportClosed = transportClosed;
        this.liveness = liveness;
    }

    /**
     * Sends one request; {@code release} runs exactly once when the call ends either way (it gives
     * back the in-flight bytes).
     */
    synchronized CompletableFuture<AppendEntriesResponse> send(AppendEntriesRequest request, long timeoutMs, Runnable release) {
        if (current == null || current.dead) {
            current = new Stream();
            current.requests = RaftServiceGrpc.newStub(channel).appendEntriesStream(current);
        }
        Stream s = current;
        long callId = s.nextCallId++;
        long now = System.nanoTime();
        Pending p = new Pending(what, release, now + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        s.pending.put(callId, p);
        if (sweep == null || p.deadlineNanos - sweepAtNanos < 0) {
            // Nothing scheduled, or this call's deadline comes first (callers normally use one
            // timeout, so under load this branch is taken once per sweep, not once per call).
            if (sweep != null) {
                sweep.cancel(false);
            }
            scheduleSweep(now, p.deadlineNanos);
        }
        try {
            s.requests.onNext(AppendEntriesFrame.newBuilder().setCallId(callId).setRequest(request).build());
        } catch (RuntimeException e) {
            Pending failed = s.pending.remove(callId);
            if (failed != null) {
                failed.fail(TransportErrors.of(what, e, transportClosed.getAsBoolean()));
            }
        }
        if (s.dead) {
            // The stream failed before or while this call joined it (gRPC may report a failure
            // synchronously): failAll may have missed this call, so fail it here.
            Pending missed = s.pending.remove(callId);
            if (missed != null) {
                missed.fail(TransportErrors.of(what, s.cause, transportClosed.getAsBoolean()));
            }
        }
        return p.future;
    }

    /**
     * Expires the overdue calls of the current stream (a dead stream's calls were all failed when
     * it died) and schedules the next sweep for the earliest remaining deadline, if any. The
     * expired calls are failed outside the lock: their callbacks may send again.
     */
    private void sweep(long generation) {
        List<Pending> overdue = new ArrayList<>();
        synchronized (this) {
            if (generation != sweepGeneration) {
                return; // replaced by an earlier sweep after this one was already running
            }
            sweep = null;
            long now = System.nanoTime();
            long earliest = 0;
            boolean waiting = false;
            Stream s = current;
            if (s != null) {
                for (Map.Entry<Long, Pending> e : s.pending.entrySet()) {
                    long deadline = e.getValue().deadlineNanos;
                    if (deadline - now <= 0) {
                        Pending p = s.pending.remove(e.getKey());
                        if (p != null) {
                            overdue.add(p);
                        }
                    } else if (!waiting || deadline - earliest < 0) {
                        earliest = deadline;
                        waiting = true;
                    }
                }
            }
            if (waiting) {
                scheduleSweep(now, earliest);
            }
        }
        for (Pending p : overdue) {
            p.fail(new TransportException(Kind.TIMEOUT, p.what + ": no answer within the deadline"));
        }
    }

    /** Schedules the sweep for {@code atNanos}; none if the scheduler is shut down (the transport is closing). */
    private void scheduleSweep(long nowNanos, long atNanos) {
        long generation = ++sweepGeneration;
        try {
            sweep = scheduler.schedule(() -> sweep(generation), atNanos - nowNanos, TimeUnit.NANOSECONDS);
            sweepAtNanos = atNanos;
        } catch (RejectedExecutionException e) {
            sweep = null;
        }
    }

    /** A call waiting for its answer. */
    private static final class Pending {
        final String what;
        final Runnable release;
        final long deadlineNanos;
        final CompletableFuture<AppendEntriesResponse> future = new CompletableFuture<>();

        Pending(String what, Runnable release, long deadlineNanos) {
            this.what = what;
            this.release = release;
            this.deadlineNanos = deadlineNanos;
        }

        void complete(AppendEntriesResponse response) {
            release.run();
            future.complete(response);
        }

        void fail(TransportException e) {
            release.run();
            future.completeExceptionally(e);
        }
    }

    /** One stream and the calls in flight on it. */
    private final class Stream implements StreamObserver<AppendEntriesResult> {
        final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
        StreamObserver<AppendEntriesFrame> requests;
        long nextCallId = 1;
        volatile Throwable cause;
        volatile boolean dead;

        @Override
        public void onNext(AppendEntriesResult result) {
            liveness.heard(System.nanoTime());
            Pending p = pending.remove(result.getCallId());
            if (p == null) {
                return; // timed out already
            }
            if (result.getErrorCode() == 0) {
                p.complete(result.getResponse());
            } else {
                Status status = Status.fromCodeValue(result.getErrorCode()).withDescription(result.getErrorMessage());
                p.fail(TransportErrors.of(p.what, status.asRuntimeException(), transportClosed.getAsBoolean()));
            }
        }

        @Override
        public void onError(Throwable t) {
            failAll(t);
        }

        @Override
        public void onCompleted() {
            failAll(Status.UNAVAILABLE.withDescription("replication stream ended by the peer").asRuntimeException());
        }

        private void failAll(Throwable t) {
            cause = t;
            dead = true;
            List<Long> ids = new ArrayList<>(pending.keySet());
            for (Long id : ids) {
                Pending p = pending.remove(id);
                if (p != null) {
                    p.fail(TransportErrors.of(p.what, t, transportClosed.getAsBoolean()));
                }
            }
        }
    }
}
