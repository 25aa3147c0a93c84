package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.GetRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Application services run on worker threads unless registered as non-blocking. */
class ApplicationServiceThreadsTest {

    /** Answers every Get with the name of the thread that ran the handler. */
    private static final class ThreadReporter extends CounterServiceGrpc.CounterServiceImplBase {
        @Override
        public void get(GetRequest request, StreamObserver<CounterResponse> out) {
            out.onNext(CounterResponse.newBuilder().setMessage(Thread.currentThread().getName()).build());
            out.onCompleted();
        }
    }

    private static String handlerThread(boolean nonBlocking) {
        GrpcRaftTransport.Builder b = GrpcRaftTransport.builder().listen("127.0.0.1", 0);
        if (nonBlocking) {
            b.addNonBlockingService(new ThreadReporter());
        } else {
            b.addService(new ThreadReporter());
        }
        try (GrpcRaftTransport transport = b.start()) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(transport.endpoint()).usePlaintext().build();
            try {
                return CounterServiceGrpc.newBlockingStub(channel).get(GetRequest.getDefaultInstance()).getMessage();
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void aServiceThatMayBlockRunsOnTheWorkers() {
        String thread = handlerThread(false);
        assertTrue(thread.startsWith("wheelraft-rpc-worker"), thread);
    }

    @Test
    void aNonBlockingServiceRunsOnTheConnectionsIoThread() {
        String thread = handlerThread(true);
        assertFalse(thread.startsWith("wheelraft-rpc-worker"), thread);
        assertTrue(thread.contains("grpc") || thread.contains("ELG") || thread.contains("worker-ELG"), thread);
    }
}
