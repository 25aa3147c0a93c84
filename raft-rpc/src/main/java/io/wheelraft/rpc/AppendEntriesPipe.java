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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>Thread-safe: sends are serialized by a lock (that is what fixes their order); answers and
 * stream errors arrive on gRPC I/O threads.
 */
final class AppendEntriesPipe {

    /** Names the calls in errors: "AppendEntries to host:port". */
    private final String what;
    private final ManagedChannel channel;
    private final ScheduledExecutorService scheduler;
    private final BooleanSupplier transportClosed;
    private Stream current;

    AppendEntriesPipe(String endpoint, ManagedChannel channel, ScheduledExecutorService scheduler, BooleanSupplier transportClosed) {
        this.what = "AppendEntries to " + endpoint;
        this.channel = channel;
        this.scheduler = scheduler;
        this.transportClosed = transportClosed;
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
        Pending p = new Pending(what, release);
        s.pending.put(callId, p);
        p.timeout = scheduler.schedule(() -> s.expire(callId), timeoutMs, TimeUnit.MILLISECONDS);
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

    /** A call waiting for its answer. */
    private static final class Pending {
        final String what;
        final Runnable release;
        final CompletableFuture<AppendEntriesResponse> future = new CompletableFuture<>();
        volatile ScheduledFuture<?> timeout;

        Pending(String what, Runnable release) {
            this.what = what;
            this.release = release;
        }

        void complete(AppendEntriesResponse response) {
            cancelTimeout();
            release.run();
            future.complete(response);
        }

        void fail(TransportException e) {
            cancelTimeout();
            release.run();
            future.completeExceptionally(e);
        }

        private void cancelTimeout() {
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    /** One stream and the calls in flight on it. */
    private final class Stream implements StreamObserver<AppendEntriesResult> {
        final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
        StreamObserver<AppendEntriesFrame> requests;
        long nextCallId = 1;
        volatile Throwable cause;
        volatile boolean dead;

        void expire(long callId) {
            Pending p = pending.remove(callId);
            if (p != null) {
                p.fail(new TransportException(Kind.TIMEOUT, p.what + ": no answer within the deadline"));
            }
        }

        @Override
        public void onNext(AppendEntriesResult result) {
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
