package io.wheelraft.rpc;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Application services run on worker threads unless registered as non-blocking. */
class ApplicationServiceThreadsTest {

    /** Strings as UTF-8: enough for a service defined without a .proto. */
    private static final MethodDescriptor.Marshaller<String> TEXT = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<String, String> WHO_RUNS_ME = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.ThreadReporter/WhoRunsMe")
            .setRequestMarshaller(TEXT).setResponseMarshaller(TEXT).build();

    /** An application service: answers with the name of the thread that ran the handler. */
    private static final BindableService THREAD_REPORTER = () -> ServerServiceDefinition.builder("test.ThreadReporter")
            .addMethod(WHO_RUNS_ME, ServerCalls.asyncUnaryCall((String request, io.grpc.stub.StreamObserver<String> out) -> {
                out.onNext(Thread.currentThread().getName());
                out.onCompleted();
            })).build();

    private static String handlerThread(boolean nonBlocking) {
        GrpcRaftTransport.Builder b = GrpcRaftTransport.builder().listen("127.0.0.1", 0);
        if (nonBlocking) {
            b.addNonBlockingService(THREAD_REPORTER);
        } else {
            b.addService(THREAD_REPORTER);
        }
        try (GrpcRaftTransport transport = b.start()) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(transport.endpoint()).usePlaintext().build();
            try {
                return ClientCalls.blockingUnaryCall(channel, WHO_RUNS_ME, io.grpc.CallOptions.DEFAULT, "");
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
        assertTrue(thread.startsWith("wheelraft-shared-io-"), "expected one of the transport's event loops, was " + thread);
    }
}
