package io.wheelraft.rpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.LivenessGrpc;
import io.wheelraft.rpc.proto.PingRequest;
import io.wheelraft.rpc.proto.PingResponse;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The liveness pings from this process to one remote endpoint, sent as messages on one long-lived
 * {@code Liveness.Watch} call. A unary call per ping cost HTTP/2 headers and trailers and a
 * deadline timer on both sides, and in an idle process those pings were most of its CPU (about
 * 2.3 % of a core with two peers pinged ten times a second). A peer that lacks the method (it
 * answers UNIMPLEMENTED) gets unary {@code Ping} calls instead, with the silence allowed as their
 * deadline.
 *
 * <p>At most one ping is under way ({@link EndpointLiveness#startPing()}). A ping on the stream
 * that stays unanswered for the silence allowed means the call is stuck (a hung or black-holed
 * peer): it is cancelled, and the ping after its end opens a new call. An unanswering peer thus
 * gets about one ping per silence allowance, as with unary pings.
 *
 * <p>{@link #ping} runs on the transport's timer thread only, the one thread that touches the call
 * (a {@link ClientCall} is not thread-safe); answers and the call's end arrive on an I/O thread.
 */
final class PingStream {

    private final Channel channel;
    private final EndpointLiveness liveness;
    private final long silenceMs;
    private final LongAdder answers;
    /** The open call, or null until the next ping opens one. */
    private final AtomicReference<ClientCall<PingRequest, PingResponse>> call = new AtomicReference<>();
    /** The peer has no {@code Watch} method: ping it with unary calls from now on. */
    private volatile boolean unaryOnly;
    /** When the ping under way was sent (timer thread only). */
    private long sentNanos;

    /** {@code answers} counts the pings answered (shared by every endpoint's stream). */
    PingStream(Channel channel, EndpointLiveness liveness, long silenceMs, LongAdder answers) {
        this.channel = channel;
        this.liveness = liveness;
        this.silenceMs = silenceMs;
        this.answers = answers;
    }

    /** Sends one ping unless one is under way; true if it sent one. Timer thread only. */
    boolean ping(PingRequest ping, long nowNanos) {
        if (!liveness.startPing()) {
            ClientCall<PingRequest, PingResponse> open = call.get();
            if (open != null && nowNanos - sentNanos >= TimeUnit.MILLISECONDS.toNanos(silenceMs)) {
                open.cancel("no answer to a liveness ping within " + silenceMs + " ms", null);
            }
            return false;
        }
        sentNanos = nowNanos;
        try {
            if (unaryOnly) {
                ClientCalls.asyncUnaryCall(
                        channel.newCall(LivenessGrpc.getPingMethod(), CallOptions.DEFAULT.withDeadlineAfter(silenceMs, TimeUnit.MILLISECONDS)),
                        ping, new UnaryAnswer());
                return true;
            }
            ClientCall<PingRequest, PingResponse> open = call.get();
            if (open == null) {
                open = channel.newCall(LivenessGrpc.getWatchMethod(), CallOptions.DEFAULT);
                call.set(open);
                open.start(new StreamAnswers(open), new Metadata());
                // At most one ping is under way, so at most one answer can wait: no flow control needed.
                open.request(Integer.MAX_VALUE);
            }
            open.sendMessage(ping);
            return true;
        } catch (RuntimeException e) {
            liveness.pingEnded(); // the channel is shutting down with the transport
            return false;
        }
    }

    private void answered(long incarnation) {
        liveness.answered(incarnation, System.nanoTime());
        answers.increment(); // after the report it may cause: tests wait on this count
    }

    /** A peer without the method answered, so it is alive; it cannot tell a restart. */
    private void unimplemented() {
        unaryOnly = true;
        liveness.answered(0, System.nanoTime());
    }

    /** Answers on the long-lived call, and its end. */
    private final class StreamAnswers extends ClientCall.Listener<PingResponse> {
        private final ClientCall<PingRequest, PingResponse> owner;

        StreamAnswers(ClientCall<PingRequest, PingResponse> owner) {
            this.owner = owner;
        }

        @Override
        public void onMessage(PingResponse response) {
            answered(response.getIncarnation());
            liveness.pingEnded(); // the call stays open for the next ping
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            call.compareAndSet(owner, null); // the next ping opens a new call
            liveness.pingEnded();
            if (status.getCode() == Status.Code.UNIMPLEMENTED) {
                unimplemented();
            }
            // Anything else (cancelled as stuck, connection lost) is no sign of life: the silence check decides.
        }
    }

    /** The outcome of one unary ping. */
    private final class UnaryAnswer implements StreamObserver<PingResponse> {
        @Override
        public void onNext(PingResponse response) {
            answered(response.getIncarnation()); // the slot frees when the call completes
        }

        @Override
        public void onError(Throwable t) {
            liveness.pingEnded();
            if (Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED) {
                unimplemented();
            }
        }

        @Override
        public void onCompleted() {
            liveness.pingEnded();
        }
    }
}
