package io.wheelraft.rpc;

import com.google.protobuf.MessageLite;
import io.grpc.ConnectivityState;
import io.grpc.InternalStatus;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.rpc.proto.PeerFrame;
import io.wheelraft.rpc.proto.PeerFrames;
import io.wheelraft.rpc.proto.PeerResult;
import io.wheelraft.rpc.proto.PeerResults;
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
 * The Raft requests of every group of this process to one remote endpoint (AppendEntries, votes,
 * TimeoutNow, ReadIndex): one long-lived bidirectional stream carries them in send order, with any
 * number in flight (bounded by the caller's in-flight byte budget), many to a message
 * ({@link Coalescer}): a timer heartbeat waits up to {@link RpcOptions#heartbeatBatchDelayMs()} for
 * company, anything else leaves at once with whatever is queued. Answers are matched by call id;
 * each call has its own deadline. When the stream breaks, every call on it fails at once and the
 * next call opens a new stream.
 *
 * <p>Deadlines are kept by one sweep per pipe rather than one scheduled task per call: the sweep
 * is scheduled for the earliest deadline among the calls in flight, expires whatever is overdue
 * when it runs and reschedules itself for the next earliest, and stops when nothing is in flight.
 * A task per call woke the timer thread on every send (its deadline was the new earliest), about
 * one wake-up per AppendEntries; the sweep wakes about once per deadline period under load and
 * never when idle. Calls still expire at their own deadline.
 *
 * <p>Thread-safe: calls join the queue under a lock (that is what fixes their order); answers and
 * stream errors arrive on gRPC I/O threads.
 */
final class PeerPipe {

    /** The requests the pipe carries, each with the answer it expects and its name in errors. */
    enum Op {
        APPEND_ENTRIES("AppendEntries", PeerResult.ResponseCase.APPEND_ENTRIES),
        REQUEST_VOTE("RequestVote", PeerResult.ResponseCase.REQUEST_VOTE),
        TIMEOUT_NOW("TimeoutNow", PeerResult.ResponseCase.TIMEOUT_NOW),
        READ_INDEX("ReadIndex", PeerResult.ResponseCase.READ_INDEX);

        final String label;
        final PeerResult.ResponseCase answer;

        Op(String label, PeerResult.ResponseCase answer) {
            this.label = label;
            this.answer = answer;
        }
    }

    /** Names the calls in errors, per op: "AppendEntries to host:port". */
    private final String[] what = new String[Op.values().length];
    private final ManagedChannel channel;
    private final ScheduledExecutorService scheduler;
    private final BooleanSupplier transportClosed;
    /** Every answer on the stream is a sign of life of the endpoint. */
    private final EndpointLiveness liveness;
    private final long heartbeatDelayMs;
    private final int maxBatchBytes;
    /** Messages and requests sent, messages of answers received, on every stream so far (diagnostics). */
    private final java.util.concurrent.atomic.LongAdder messagesSent = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder framesSent = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder answerMessages = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder streamsOpened = new java.util.concurrent.atomic.LongAdder();
    private Stream current;
    /** The scheduled sweep (null: none) and when it runs; guarded by this pipe's lock. */
    private ScheduledFuture<?> sweep;
    private long sweepAtNanos;
    /** Bumped whenever a sweep is replaced, so a replaced one that already started does nothing. */
    private long sweepGeneration;

    PeerPipe(String endpoint, ManagedChannel channel, ScheduledExecutorService scheduler, BooleanSupplier transportClosed,
             EndpointLiveness liveness, long heartbeatDelayMs, int maxBatchBytes) {
        for (Op op : Op.values()) {
            what[op.ordinal()] = op.label + " to " + endpoint;
        }
        this.heartbeatDelayMs = heartbeatDelayMs;
        this.maxBatchBytes = maxBatchBytes;
        this.channel = channel;
        this.scheduler = scheduler;
        this.transportClosed = transportClosed;
        this.liveness = liveness;
    }

    /**
     * Sends one request, which must be of {@code op}'s type; {@code release} runs exactly once when
     * the call ends either way (it gives back the in-flight bytes). The future completes with
     * {@code op}'s response type.
     */
    <R> CompletableFuture<R> send(Op op, MessageLite request, long timeoutMs, Runnable release) {
        Pending p;
        Stream s;
        long callId;
        boolean sendNow;
        synchronized (this) {
            if (current != null && current.dead && channelFailing()) {
                // What gRPC would answer a new stream on this channel (a call that does not wait for
                // the channel fails at once while it is in TRANSIENT_FAILURE), without opening one:
                // each open stream is a call, its listener, a map and an outbox. Once a peer process
                // is gone, every leader here still heartbeats it until its group settles without it;
                // after a kill, thousands of groups did, one new stream per heartbeat.
                release.run();
                return CompletableFuture.failedFuture(TransportErrors.of(what[op.ordinal()], current.cause, transportClosed.getAsBoolean()));
            }
            if (current == null || current.dead) {
                current = new Stream();
                streamsOpened.increment();
                current.requests = RaftServiceGrpc.newStub(channel).peerStream(current);
            }
            s = current;
            callId = s.nextCallId++;
            long now = System.nanoTime();
            p = new Pending(what[op.ordinal()], op.answer, release, now + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
            s.pending.put(callId, p);
            if (sweep == null || p.deadlineNanos - sweepAtNanos < 0) {
                // Nothing scheduled, or this call's deadline comes first (callers normally use one
                // timeout, so under load this branch is taken once per sweep, not once per call).
                if (sweep != null) {
                    sweep.cancel(false);
                }
                scheduleSweep(now, p.deadlineNanos);
            }
            // Joining the queue under the lock is what keeps the send order; the sending itself
            // happens outside it, so other threads can queue meanwhile and go in the same message.
            sendNow = s.outbox.offer(frame(op, callId, request), !mayWait(request));
        }
        if (sendNow) {
            s.outbox.send();
        }
        if (s.dead) {
            // The stream failed before or while this call joined it (gRPC may report a failure
            // synchronously): failAll may have missed this call, so fail it here.
            Pending missed = s.pending.remove(callId);
            if (missed != null) {
                missed.fail(TransportErrors.of(missed.what, s.cause, transportClosed.getAsBoolean()));
            }
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<R> typed = (CompletableFuture<R>) p.future;
        return typed;
    }

    /**
     * The channel is in TRANSIENT_FAILURE: its last connection attempt failed and gRPC waits out
     * its reconnect backoff (it connects again by itself, and a liveness ping or a later call then
     * finds it READY or CONNECTING).
     */
    private boolean channelFailing() {
        try {
            return channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE;
        } catch (UnsupportedOperationException e) {
            return false; // a channel that does not tell: open streams as before
        }
    }

    /** Streams opened so far (diagnostics and tests). */
    long streamsOpened() {
        return streamsOpened.sum();
    }

    long messagesSent() {
        return messagesSent.sum();
    }

    long framesSent() {
        return framesSent.sum();
    }

    long answerMessagesReceived() {
        return answerMessages.sum();
    }

    /**
     * A heartbeat of the leader's heartbeat timer may wait a few milliseconds for other groups'
     * company: it only keeps followers from campaigning and the lease alive, both measured in
     * election timeouts (and the lease counts from when the leader sent it, so a later departure
     * only shortens it). A read-confirming round, entries, votes and the rest are waited on.
     */
    static boolean mayWait(MessageLite request) {
        return request instanceof AppendEntriesRequest a && a.getHeartbeat() && !a.getReadRound();
    }

    private static PeerFrame frame(Op op, long callId, MessageLite request) {
        PeerFrame.Builder f = PeerFrame.newBuilder().setCallId(callId);
        switch (op) {
            case APPEND_ENTRIES -> f.setAppendEntries((AppendEntriesRequest) request);
            case REQUEST_VOTE -> f.setRequestVote((RequestVoteRequest) request);
            case TIMEOUT_NOW -> f.setTimeoutNow((TimeoutNowRequest) request);
            case READ_INDEX -> f.setReadIndex((ReadIndexRequest) request);
        }
        return f.build();
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
        final PeerResult.ResponseCase expects;
        final Runnable release;
        final long deadlineNanos;
        final CompletableFuture<Object> future = new CompletableFuture<>();

        Pending(String what, PeerResult.ResponseCase expects, Runnable release, long deadlineNanos) {
            this.what = what;
            this.expects = expects;
            this.release = release;
            this.deadlineNanos = deadlineNanos;
        }

        void complete(Object response) {
            release.run();
            future.complete(response);
        }

        void fail(TransportException e) {
            release.run();
            future.completeExceptionally(e);
        }
    }

    /** One stream, the calls in flight on it and the requests queued for it. */
    private final class Stream implements StreamObserver<PeerResults> {
        final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
        final Coalescer<PeerFrame> outbox = new Coalescer<>(scheduler, heartbeatDelayMs, maxBatchBytes,
                PeerFrame::getSerializedSize, this::write);
        StreamObserver<PeerFrames> requests;
        long nextCallId = 1;
        volatile Throwable cause;
        volatile boolean dead;
        /** Set by the first answer, on the stream's event loop. */
        private boolean loopKnown;

        /** Sends one batch; the outbox never calls this from two threads at once. */
        private void write(java.util.List<PeerFrame> batch) {
            if (dead) {
                return; // failAll failed these calls
            }
            try {
                requests.onNext(PeerFrames.newBuilder().addAllFrames(batch).build());
                messagesSent.increment();
                framesSent.add(batch.size());
            } catch (RuntimeException e) {
                for (PeerFrame f : batch) {
                    Pending failed = pending.remove(f.getCallId());
                    if (failed != null) {
                        failed.fail(TransportErrors.of(failed.what, e, transportClosed.getAsBoolean()));
                    }
                }
            }
        }

        @Override
        public void onNext(PeerResults results) {
            if (!loopKnown) {
                // Answers arrive on the loop that also writes this stream's requests (direct executor).
                loopKnown = true;
                outbox.sendOn(TransportEventLoops.currentLoop());
            }
            liveness.heard(System.nanoTime());
            answerMessages.increment();
            for (PeerResult result : results.getResultsList()) {
                answer(result);
            }
        }

        private void answer(PeerResult result) {
            Pending p = pending.remove(result.getCallId());
            if (p == null) {
                return; // timed out already
            }
            if (result.getErrorCode() != 0) {
                Status status = Status.fromCodeValue(result.getErrorCode()).withDescription(result.getErrorMessage());
                // An error answer is an expected outcome (e.g. NOT_FOUND from a peer still starting its groups): no stack trace.
                p.fail(TransportErrors.of(p.what, InternalStatus.asRuntimeException(status, null, false),
                        transportClosed.getAsBoolean()));
                return;
            }
            if (result.getResponseCase() != p.expects) {
                p.fail(new TransportException(Kind.REJECTED, p.what + ": the peer answered " + result.getResponseCase()
                        + " where " + p.expects + " was expected"));
                return;
            }
            p.complete(switch (p.expects) {
                case APPEND_ENTRIES -> result.getAppendEntries();
                case REQUEST_VOTE -> result.getRequestVote();
                case TIMEOUT_NOW -> result.getTimeoutNow();
                case READ_INDEX -> result.getReadIndex();
                case RESPONSE_NOT_SET -> throw new IllegalStateException("no call expects no response");
            });
        }

        @Override
        public void onError(Throwable t) {
            failAll(t);
        }

        @Override
        public void onCompleted() {
            failAll(Status.UNAVAILABLE.withDescription("peer stream ended by the peer").asRuntimeException());
        }

        private void failAll(Throwable t) {
            cause = t;
            dead = true;
            outbox.close();
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
