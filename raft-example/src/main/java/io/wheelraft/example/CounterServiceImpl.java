package io.wheelraft.example;

import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.GetRequest;
import io.wheelraft.rpc.proto.counter.IncrCall;
import io.wheelraft.rpc.proto.counter.IncrCalls;
import io.wheelraft.rpc.proto.counter.IncrReplies;
import io.wheelraft.rpc.proto.counter.IncrReply;
import io.wheelraft.rpc.proto.counter.IncrRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The counter's gRPC service: {@code Incr} replicates a command through {@link Node#apply} and
 * answers with the value the state machine produced; {@code Get} waits for
 * {@link Node#readIndex} and then reads the value (linearizable, served by any member).
 *
 * <p>Outcomes follow the client contract: NOT_LEADER (never appended, with the leader as hint),
 * FAILED (certainly not applied: the message starts with the {@link RaftError} name, so a client
 * can tell a retryable BUSY from a final error), UNKNOWN (appended, may or may not commit).
 *
 * <p>Threading: never blocks, so the transport may run it on its I/O threads
 * ({@code addNonBlockingService}); answers come from node threads. {@code IncrStream} serializes
 * the answers of one stream; nothing else holds a lock.
 */
public final class CounterServiceImpl extends CounterServiceGrpc.CounterServiceImplBase {

    /** The only Raft group of the counter service. */
    public static final String GROUP_ID = "counter";

    private static final Logger LOG = LoggerFactory.getLogger(CounterServiceImpl.class);

    /**
     * Increments one IncrStream may have unanswered. A client that keeps sending without reading
     * would otherwise make the server hold an unbounded number of answers for it.
     */
    static final int DEFAULT_MAX_UNANSWERED_PER_STREAM = 1 << 16;

    private final int maxUnansweredPerStream;
    private final AtomicReference<Node> node = new AtomicReference<>();
    private final CounterStateMachine stateMachine;
    private final Timer incrLatency;
    private final Counter incrOk;
    private final Counter incrNotLeader;
    private final Counter incrFailed;
    private final Counter incrUnknown;
    private final Counter duplicates;
    private final Timer getLatency;

    public CounterServiceImpl(CounterStateMachine stateMachine) {
        this(stateMachine, new SimpleMeterRegistry());
    }

    public CounterServiceImpl(CounterStateMachine stateMachine, MeterRegistry registry) {
        this(stateMachine, registry, DEFAULT_MAX_UNANSWERED_PER_STREAM);
    }

    /** {@code maxUnansweredPerStream}: increments one IncrStream may have in flight before the rest are refused BUSY. */
    CounterServiceImpl(CounterStateMachine stateMachine, MeterRegistry registry, int maxUnansweredPerStream) {
        if (maxUnansweredPerStream <= 0) {
            throw new IllegalArgumentException("maxUnansweredPerStream must be > 0, was " + maxUnansweredPerStream);
        }
        this.maxUnansweredPerStream = maxUnansweredPerStream;
        this.stateMachine = stateMachine;
        this.incrLatency = Timer.builder("counter.incr.latency").description("Incr served by this node, OK answers")
                .publishPercentiles(0.5, 0.99, 0.999).register(registry);
        this.incrOk = outcome(registry, "ok");
        this.incrNotLeader = outcome(registry, "not_leader");
        this.incrFailed = outcome(registry, "failed");
        this.incrUnknown = outcome(registry, "unknown");
        this.duplicates = Counter.builder("counter.incr.duplicates").description("retried increments answered without applying them twice")
                .register(registry);
        this.getLatency = Timer.builder("counter.get.latency").description("linearizable reads served by this node")
                .register(registry);
    }

    private static Counter outcome(MeterRegistry registry, String outcome) {
        return Counter.builder("counter.incr.requests").tag("outcome", outcome).register(registry);
    }

    /** Attaches the node once it has started; until then every request is answered NOT_LEADER. */
    public void attach(Node started) {
        node.set(started);
    }

    @Override
    public void incr(IncrRequest request, StreamObserver<CounterResponse> out) {
        incr(request, response -> reply(out, response));
    }

    @Override
    public StreamObserver<IncrCalls> incrStream(StreamObserver<IncrReplies> out) {
        return new IncrStreamHandler(out);
    }

    /** Replicates one increment; {@code answer} gets exactly one response, from whichever thread decides it. */
    private void incr(IncrRequest request, Consumer<CounterResponse> answer) {
        Node n = node.get();
        if (n == null) {
            answer.accept(notLeader(null));
            return;
        }
        if (!GROUP_ID.equals(request.getGroupId()) && !request.getGroupId().isEmpty()) {
            answer.accept(failed(RaftError.NOT_FOUND, "no counter group '" + request.getGroupId() + "' here"));
            return;
        }
        java.nio.ByteBuffer data;
        try {
            data = CounterStateMachine.encode(request.getClientId(), request.getSequence(), request.getDelta());
        } catch (IllegalArgumentException e) {
            answer.accept(failed(RaftError.INVALID_ARGUMENT, e.getMessage()));
            return;
        }
        long start = System.nanoTime();
        n.apply(new Task(data, new IncrClosure() {
            @Override
            public void run(Status status) {
                answer.accept(incrAnswer(n, this, status, start));
            }
        }));
    }

    /**
     * One client's IncrStream: each call is served as {@code Incr} would serve it and answered
     * with its call id. Answers come from several threads (the node's apply lane, the caller's
     * thread for refusals), so they are serialized here; the answers of one apply batch leave in
     * one message ({@link AnswerBatch}). Calls still in flight when the client goes away are
     * applied or not as usual; their answers are dropped, and the client retries them with the
     * same sequence (exactly-once). Once the client half-closes, the stream ends after the last
     * answer.
     */
    private final class IncrStreamHandler implements StreamObserver<IncrCalls>, AnswerBatch.Sender {
        private final StreamObserver<IncrReplies> out;
        /** Guarded by this. */
        private IncrReplies.Builder ready = IncrReplies.newBuilder();
        private int unanswered;
        private boolean halfClosed;
        private boolean closed;

        IncrStreamHandler(StreamObserver<IncrReplies> out) {
            this.out = out;
        }

        @Override
        public void onNext(IncrCalls calls) {
            // Calls refused at once (not the leader, bad input, too many in flight) are answered together.
            AnswerBatch.collect(() -> {
                for (IncrCall call : calls.getCallsList()) {
                    long id = call.getCallId();
                    boolean admitted;
                    synchronized (this) {
                        admitted = unanswered < maxUnansweredPerStream;
                        unanswered++;
                    }
                    Consumer<CounterResponse> reply = response -> answer(IncrReply.newBuilder().setCallId(id).setResponse(response).build());
                    if (admitted) {
                        incr(call.getRequest(), reply);
                    } else {
                        incrFailed.increment();
                        reply.accept(failed(RaftError.BUSY, maxUnansweredPerStream
                                + " increments of this stream are still unanswered; read the answers, then retry"));
                    }
                }
            });
        }

        private void answer(IncrReply reply) {
            synchronized (this) {
                unanswered--;
                if (closed) {
                    return;
                }
                ready.addReplies(reply);
            }
            if (!AnswerBatch.defer(this)) {
                flush();
            }
        }

        @Override
        public synchronized void flush() {
            if (closed || ready.getRepliesCount() == 0) {
                return;
            }
            IncrReplies replies = ready.build();
            ready = IncrReplies.newBuilder();
            try {
                out.onNext(replies);
            } catch (RuntimeException e) {
                closed = true;
                LOG.debug("counter stream answers could not be sent: {}", e.toString());
                return;
            }
            finishIfDone();
        }

        @Override
        public synchronized void onError(Throwable t) {
            closed = true; // the client is gone: nothing more can be sent
        }

        /** The client sends no more calls: the stream ends once the ones in flight are answered. */
        @Override
        public synchronized void onCompleted() {
            halfClosed = true;
            finishIfDone();
        }

        private void finishIfDone() {
            if (halfClosed && unanswered == 0 && ready.getRepliesCount() == 0 && !closed) {
                closed = true;
                try {
                    out.onCompleted();
                } catch (RuntimeException e) {
                    LOG.debug("counter stream could not be closed: {}", e.toString());
                }
            }
        }
    }

    private CounterResponse incrAnswer(Node n, IncrClosure done, Status status, long startNanos) {
        if (status.isOk()) {
            switch (done.result()) {
                case APPLIED, DUPLICATE -> {
                    if (done.result() == IncrClosure.Result.DUPLICATE) {
                        duplicates.increment();
                    }
                    incrOk.increment();
                    incrLatency.record(System.nanoTime() - startNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
                    return CounterResponse.newBuilder().setOutcome(CounterOutcome.COUNTER_OUTCOME_OK).setValue(done.value()).build();
                }
                default -> {
                    incrUnknown.increment();
                    return unknown("stale sequence: the client has since sent newer commands");
                }
            }
        }
        return switch (status.code()) {
            case NOT_LEADER -> {
                incrNotLeader.increment();
                yield notLeader(status.leaderHint() != null ? status.leaderHint() : n.getLeaderId());
            }
            // Refused before the entry was appended: certainly not applied.
            case BUSY, TERM_MISMATCH, LEADER_TRANSFERRING, INVALID_ARGUMENT -> {
                incrFailed.increment();
                yield failed(status.code(), status.message());
            }
            default -> {
                incrUnknown.increment();
                yield unknown(status.code() + ": " + status.message());
            }
        };
    }

    @Override
    public void get(GetRequest request, StreamObserver<CounterResponse> out) {
        Node n = node.get();
        if (n == null) {
            reply(out, notLeader(null));
            return;
        }
        long start = System.nanoTime();
        n.readIndex((status, readIndex) -> {
            if (status.isOk()) {
                getLatency.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
                reply(out, CounterResponse.newBuilder().setOutcome(CounterOutcome.COUNTER_OUTCOME_OK).setValue(stateMachine.value()).build());
            } else if (status.code() == RaftError.NOT_LEADER) {
                reply(out, notLeader(status.leaderHint() != null ? status.leaderHint() : n.getLeaderId()));
            } else {
                // A read changes nothing, so any failure is simply "no value".
                reply(out, failed(status.code(), status.message()));
            }
        });
    }

    private static CounterResponse notLeader(PeerId leader) {
        return CounterResponse.newBuilder().setOutcome(CounterOutcome.COUNTER_OUTCOME_NOT_LEADER)
                .setLeaderHint(leader == null ? "" : leader.endpoint())
                .setMessage(leader == null ? "not the leader; leader unknown" : "not the leader; leader is " + leader.endpoint()).build();
    }

    private static CounterResponse failed(RaftError code, String message) {
        return CounterResponse.newBuilder().setOutcome(CounterOutcome.COUNTER_OUTCOME_FAILED).setMessage(code + ": " + message).build();
    }

    private static CounterResponse unknown(String message) {
        return CounterResponse.newBuilder().setOutcome(CounterOutcome.COUNTER_OUTCOME_UNKNOWN).setMessage(message).build();
    }

    private static void reply(StreamObserver<CounterResponse> out, CounterResponse response) {
        try {
            out.onNext(response);
            out.onCompleted();
        } catch (RuntimeException e) {
            // The caller went away (deadline, cancel): it will retry with the same sequence.
            LOG.debug("counter answer could not be sent: {}", e.toString());
        }
    }
}
