package io.wheelraft.rpc;

import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.LivenessGrpc;
import io.wheelraft.rpc.proto.PingRequest;
import io.wheelraft.rpc.proto.PingResponse;

import java.util.function.Supplier;

/**
 * Answers liveness pings from peer processes with this transport's endpoint and incarnation, each
 * ping a call of its own ({@code Ping}) or a message on a long-lived call ({@code Watch}). Served
 * on the connection's I/O thread: an answer must not wait behind application work, or a busy
 * process would look dead. Served whether or not this transport watches its own peers. Stateless
 * once its answer is built; thread-safe.
 */
final class LivenessService extends LivenessGrpc.LivenessImplBase {

    /** Told of a ping that proves a round trip with its sender: (sender's endpoint, sender's incarnation). */
    interface RoundTrips {
        void pingedBy(String endpoint, long incarnation);
    }

    private final Supplier<String> endpoint;
    private final long incarnation;
    private final RoundTrips roundTrips;
    /** Built on the first ping: the endpoint is known only once the server listens. */
    private volatile PingResponse answer;

    LivenessService(Supplier<String> endpoint, long incarnation, RoundTrips roundTrips) {
        this.endpoint = endpoint;
        this.incarnation = incarnation;
        this.roundTrips = roundTrips;
    }

    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> responseObserver) {
        responseObserver.onNext(answer());
        responseObserver.onCompleted();
    }

    /**
     * One answer per ping on the caller's long-lived call, until the caller ends it. The caller
     * sends a ping on the call only once the previous one was answered, so every ping after the
     * first shows that the sender is alive, that it reaches this process, and that this process's
     * last answer reached it: the round trip a ping of this process's own would prove.
     */
    @Override
    public StreamObserver<PingRequest> watch(StreamObserver<PingResponse> answers) {
        return new StreamObserver<>() {
            private boolean answeredBefore;

            @Override
            public void onNext(PingRequest request) {
                if (answeredBefore) {
                    roundTrips.pingedBy(request.getEndpoint(), request.getIncarnation());
                }
                answeredBefore = true;
                answers.onNext(answer());
            }

            @Override
            public void onError(Throwable t) {
                // The caller cancelled or its connection broke: nothing to clean up.
            }

            @Override
            public void onCompleted() {
                answers.onCompleted();
            }
        };
    }

    private PingResponse answer() {
        PingResponse a = answer;
        if (a == null) {
            a = PingResponse.newBuilder().setEndpoint(endpoint.get()).setIncarnation(incarnation).build();
            answer = a;
        }
        return a;
    }
}
