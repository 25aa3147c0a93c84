package io.wheelraft.bench;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.IncrCall;
import io.wheelraft.rpc.proto.counter.IncrCalls;
import io.wheelraft.rpc.proto.counter.IncrReplies;
import io.wheelraft.rpc.proto.counter.IncrReply;
import io.wheelraft.rpc.proto.counter.IncrRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Drives WheelRaft's counter over {@code CounterService.IncrStream}: every slot is still its own
 * exactly-once client session with one increment in flight, but all slots share one long-lived
 * stream to the believed leader, the way a gRPC client with many requests in flight would talk
 * to it (SOFAJRaft's Bolt client likewise multiplexes its requests over one connection). A
 * NOT_LEADER answer moves the guess to the hinted node; a broken stream fails its calls and the
 * next call opens a new one. Each call has a 5 s deadline. Calls sent while a batch of answers
 * is being handled (the closed loop sends the next increment from the answer's callback) leave
 * together in one stream message when the batch is done.
 *
 * <p>Thread-safe under {@link CounterClient}'s one-request-per-slot rule; sends on a stream are
 * serialized by its lock (gRPC streams are not thread-safe).
 */
final class WheelRaftStreamCounterClient extends WheelRaftClientBase {

    private final ScheduledExecutorService deadlines = deadlineTimer();
    private Stream stream; // guarded by this

    private static ScheduledExecutorService deadlineTimer() {
        java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "wheelraft-stream-deadlines");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true); // nearly every deadline is cancelled: do not keep them queued for 5 s
        return timer;
    }

    WheelRaftStreamCounterClient(List<String> endpoints) {
        super(endpoints);
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        IncrRequest request = nextIncrement(slot);
        CompletableFuture<Long> result = new CompletableFuture<>();
        streamTo(leader()).send(request, result);
        return result;
    }

    private synchronized Stream streamTo(String target) {
        if (stream == null || stream.broken || !stream.target.equals(target)) {
            if (stream != null) {
                stream.finish();
            }
            stream = new Stream(target);
        }
        return stream;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (stream != null) {
                stream.finish();
            }
        }
        deadlines.shutdownNow();
        closeChannels();
    }

    /** One IncrStream to one server and the calls waiting on it. */
    private final class Stream implements ClientResponseObserver<IncrCalls, IncrReplies> {
        final String target;
        final Map<Long, CompletableFuture<Long>> pending = new ConcurrentHashMap<>();
        final io.grpc.stub.StreamObserver<IncrCalls> requests;
        /** Set while this stream's answers are handled on the current thread: sends wait for the batch. */
        final ThreadLocal<Boolean> handlingAnswers = new ThreadLocal<>();
        long nextCallId = 1; // guarded by this
        IncrCalls.Builder unsent = IncrCalls.newBuilder(); // guarded by this
        volatile boolean broken;

        Stream(String target) {
            this.target = target;
            this.requests = CounterServiceGrpc.newStub(channel(target)).incrStream(this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<IncrCalls> call) {
            // no flow-control hooks: the load bounds what is in flight
        }

        void send(IncrRequest request, CompletableFuture<Long> result) {
            long id;
            synchronized (this) {
                id = nextCallId++;
                pending.put(id, result);
                unsent.addCalls(IncrCall.newBuilder().setCallId(id).setRequest(request));
            }
            if (handlingAnswers.get() == null) {
                flushCalls();
            }
            if (broken && pending.remove(id) != null) {
                result.completeExceptionally(new IllegalStateException(target + ": stream broke"));
                return;
            }
            var timeout = deadlines.schedule(() -> {
                if (pending.remove(id, result)) {
                    result.completeExceptionally(new TimeoutException(target + ": no answer within " + DEADLINE_MS + " ms"));
                }
            }, DEADLINE_MS, TimeUnit.MILLISECONDS);
            result.whenComplete((v, e) -> timeout.cancel(false));
        }

        /** Sends the calls queued so far in one message. */
        synchronized void flushCalls() {
            if (unsent.getCallsCount() == 0) {
                return;
            }
            IncrCalls calls = unsent.build();
            unsent = IncrCalls.newBuilder();
            try {
                requests.onNext(calls);
            } catch (RuntimeException e) {
                broken = true;
                for (IncrCall c : calls.getCallsList()) {
                    CompletableFuture<Long> f = pending.remove(c.getCallId());
                    if (f != null) {
                        f.completeExceptionally(e);
                    }
                }
            }
        }

        @Override
        public void onNext(IncrReplies replies) {
            handlingAnswers.set(Boolean.TRUE);
            try {
                for (IncrReply reply : replies.getRepliesList()) {
                    answer(reply);
                }
            } finally {
                handlingAnswers.remove();
                flushCalls();
            }
        }

        private void answer(IncrReply reply) {
            CompletableFuture<Long> result = pending.remove(reply.getCallId());
            if (result == null) {
                return; // timed out already
            }
            CounterResponse r = reply.getResponse();
            if (r.getOutcome() == CounterOutcome.COUNTER_OUTCOME_OK) {
                result.complete(r.getValue());
                return;
            }
            if (r.getOutcome() == CounterOutcome.COUNTER_OUTCOME_NOT_LEADER) {
                moveLeader(target, r.getLeaderHint());
            }
            result.completeExceptionally(new IllegalStateException(target + ": " + r.getOutcome() + " " + r.getMessage()));
        }

        @Override
        public void onError(Throwable t) {
            broken = true;
            moveLeader(target, "");
            failAll(t);
        }

        @Override
        public void onCompleted() {
            broken = true;
            failAll(new IllegalStateException(target + ": stream ended by the server"));
        }

        private void failAll(Throwable t) {
            for (Long id : new ArrayList<>(pending.keySet())) {
                CompletableFuture<Long> f = pending.remove(id);
                if (f != null) {
                    f.completeExceptionally(t);
                }
            }
        }

        synchronized void finish() {
            broken = true;
            try {
                requests.onCompleted();
            } catch (RuntimeException e) {
                // already broken
            }
        }
    }
}
