package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.wheelraft.proto.NodeStatusRequest;
import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.rpc.proto.AdminServiceGrpc;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Application services run on worker threads unless registered as non-blocking. */
class ApplicationServiceThreadsTest {

    /** An application service: answers every Status with the name of the thread that ran the handler. */
    private static final class ThreadReporter extends AdminServiceGrpc.AdminServiceImplBase {
        @Override
        public void status(NodeStatusRequest request, StreamObserver<NodeStatusResponse> out) {
            out.onNext(NodeStatusResponse.newBuilder().setSelf(Thread.currentThread().getName()).build());
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
                return AdminServiceGrpc.newBlockingStub(channel).status(NodeStatusRequest.getDefaultInstance()).getSelf();
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
