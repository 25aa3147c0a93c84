package io.wheelraft.rpc;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.rpc.proto.RaftServiceGrpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.wheelraft.rpc.Requests.GROUP;
import static io.wheelraft.rpc.Requests.answer;
import static io.wheelraft.rpc.Requests.append;
import static io.wheelraft.rpc.Requests.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MalformedAndOversizedRequestsTest {

    private static final int LIMIT = 64 * 1024;

    private GrpcRaftTransport leader;
    private GrpcRaftTransport follower;
    private PeerId leaderId;
    private PeerId followerId;

    @BeforeEach
    void start() {
        leader = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        follower = GrpcRaftTransport.builder().listen("127.0.0.1", 0)
                .options(RpcOptions.builder().maxMessageBytes(LIMIT).build()).start();
        leaderId = Requests.peerAt(leader);
        followerId = Requests.peerAt(follower);
        follower.register(GROUP, followerId, new FakeHandler());
    }

    @AfterEach
    void stop() {
        leader.close();
        follower.close();
    }

    @Test
    void garbageBytesOnThePortLeaveTheNodeServing() throws Exception {
        byte[] garbage = new byte[4096];
        new Random(42).nextBytes(garbage);
        try (Socket s = new Socket("127.0.0.1", follower.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(garbage);
            out.flush();
            InputStream in = s.getInputStream();
            // The server answers the broken preface by closing the connection; read until it does.
            byte[] buf = new byte[1024];
            try {
                while (in.read(buf) >= 0) {
                    // drain
                }
            } catch (IOException closedByServer) {
                // a reset is as good as a close
            }
        }
        assertTrue(answer(leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 5000)).getSuccess());
    }

    @Test
    void undecodableRequestBytesGetInvalidArgument() throws Exception {
        ManagedChannel channel = RaftChannels.open(follower.endpoint(), RpcOptions.defaults());
        try {
            byte[] notAProtobuf = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 0x01};
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> rawCall(channel, RaftServiceGrpc.getAppendEntriesMethod().getFullMethodName(), notAProtobuf));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
            assertTrue(e.getStatus().getDescription().contains("malformed"), e.toString());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertTrue(answer(leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 5000)).getSuccess());
    }

    @Test
    void oversizedUnaryRequestGetsResourceExhausted() throws Exception {
        ManagedChannel channel = RaftChannels.open(follower.endpoint(), RpcOptions.defaults());
        try {
            byte[] big = append(leaderId, followerId, 1, 1, 2 * LIMIT).toByteArray();
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> rawCall(channel, RaftServiceGrpc.getAppendEntriesMethod().getFullMethodName(), big));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.toString());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertTrue(answer(leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 5000)).getSuccess());
    }

    @Test
    void oversizedPipelinedAppendIsRejectedAndReplicationRecovers() throws Exception {
        CompletableFuture<AppendEntriesResponse> big = leader.appendEntries(followerId, append(leaderId, followerId, 1, 4, LIMIT), 5000);
        assertEquals(Kind.REJECTED, failure(big).kind());
        assertTrue(answer(leader.appendEntries(followerId, append(leaderId, followerId, 2, 1, 16), 5000)).getSuccess());
    }

    @Test
    void requestOverTheSendersOwnLimitFailsWithoutBeingSent() throws Exception {
        try (GrpcRaftTransport small = GrpcRaftTransport.builder().options(RpcOptions.builder().maxMessageBytes(1024).build()).start()) {
            var e = failure(small.appendEntries(followerId, append(leaderId, followerId, 1, 1, 4096), 5000));
            assertEquals(Kind.REJECTED, e.kind());
            assertTrue(e.getMessage().contains("maxMessageBytes"), e.getMessage());
        }
    }

    @Test
    void requestsBeyondTheServersInFlightBudgetGetResourceExhausted() throws Exception {
        try (GrpcRaftTransport tight = GrpcRaftTransport.builder()
                .options(RpcOptions.builder().maxInboundInFlightBytes(1000).build()).start()) {
            PeerId tightId = Requests.peerAt(tight);
            tight.register(GROUP, tightId, new FakeHandler() {
                @Override
                public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
                    return new CompletableFuture<>(); // never answers: its bytes stay in flight
                }
            });
            CompletableFuture<AppendEntriesResponse> first = leader.appendEntries(tightId, append(leaderId, tightId, 1, 1, 600), 3000);
            var e = failure(leader.appendEntries(tightId, append(leaderId, tightId, 2, 1, 600), 3000));
            assertEquals(Kind.REJECTED, e.kind());
            assertTrue(e.getMessage().contains("RESOURCE_EXHAUSTED"), e.getMessage());
            assertEquals(Kind.TIMEOUT, failure(first).kind());
        }
    }

    private static byte[] rawCall(ManagedChannel channel, String fullMethodName, byte[] payload) {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullMethodName)
                .setRequestMarshaller(new BytesMarshaller())
                .setResponseMarshaller(new BytesMarshaller())
                .build();
        return ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), payload);
    }

    /** Sends bytes as they are: lets the test put anything on the wire. */
    static final class BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
