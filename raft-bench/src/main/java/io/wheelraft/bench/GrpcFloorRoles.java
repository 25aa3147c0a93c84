package io.wheelraft.bench;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@link LatencyFloorProbe}'s roles over gRPC instead of plain sockets: the same three processes
 * and messages, each hop one message on a long-lived bidirectional stream (the way WheelRaft's
 * AppendEntries pipe and the counter's IncrStream travel), raw bytes with no protobuf, callbacks
 * on the I/O threads (directExecutor), every sync on the thread that received the message. The
 * leader's channels to the followers have an event loop of their own, so its own sync never
 * holds up the AppendEntries it has just sent. The difference to the socket floor is what gRPC
 * itself costs on this machine.
 */
final class GrpcFloorRoles {

    private static final MethodDescriptor<byte[], byte[]> RELAY = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName("floor.Probe/Relay")
            .setRequestMarshaller(new Bytes())
            .setResponseMarshaller(new Bytes())
            .build();

    private GrpcFloorRoles() {
    }

    static void runFollower(int port, Path file) throws Exception {
        LatencyFloorProbe.SyncedLog log = new LatencyFloorProbe.SyncedLog(file);
        CountDownLatch done = new CountDownLatch(1);
        Server server = serve(port, answers -> new Relay() {
            @Override
            public void onNext(byte[] request) {
                log.append(ByteBuffer.wrap(request));
                answers.onNext(ack(seqOf(request)));
            }

            @Override
            void closed() {
                done.countDown();
            }
        });
        done.await();
        log.report("follower on port " + port + " (gRPC)");
        server.shutdownNow();
    }

    static void runLeader(int port, int follower1, int follower2, Path file) throws Exception {
        LatencyFloorProbe.SyncedLog log = new LatencyFloorProbe.SyncedLog(file);
        EpollEventLoopGroup outbound = new EpollEventLoopGroup(1);
        CountDownLatch done = new CountDownLatch(1);
        Server server = serve(port, client -> new Relay() {
            final Object commitLock = new Object();
            long ownSynced = -1;
            long followerAcked = -1;
            long answered = -1;
            final StreamObserver<byte[]>[] followers = streams(outbound, this::acked, follower1, follower2);

            @Override
            public void onNext(byte[] request) {
                for (StreamObserver<byte[]> f : followers) {
                    synchronized (f) {
                        f.onNext(request);
                    }
                }
                log.append(ByteBuffer.wrap(request)); // while the followers sync theirs
                synchronized (commitLock) {
                    ownSynced = seqOf(request);
                    answerIfCommitted();
                }
            }

            void acked(long seq) {
                synchronized (commitLock) {
                    followerAcked = Math.max(followerAcked, seq);
                    answerIfCommitted();
                }
            }

            private void answerIfCommitted() {
                long committed = Math.min(ownSynced, followerAcked);
                if (committed > answered) {
                    answered = committed;
                    client.onNext(ack(committed));
                }
            }

            @Override
            void closed() {
                for (StreamObserver<byte[]> f : followers) {
                    synchronized (f) {
                        f.onCompleted();
                    }
                }
                done.countDown();
            }
        });
        done.await();
        log.report("leader (gRPC)");
        server.shutdownNow();
        outbound.shutdownGracefully();
    }

    /** Sends one increment at a time, the next from the answer's callback, and returns when all are answered. */
    static void runClient(int leaderPort, int count, LatencyFloorProbe.Recorder recorder) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", leaderPort, InsecureChannelCredentials.create())
                .directExecutor().build();
        CountDownLatch done = new CountDownLatch(1);
        long[] sentAt = new long[1];
        @SuppressWarnings("unchecked")
        StreamObserver<byte[]>[] leader = new StreamObserver[1];
        leader[0] = ClientCalls.asyncBidiStreamingCall(channel.newCall(RELAY, CallOptions.DEFAULT.withWaitForReady()), new Relay() {
            @Override
            public void onNext(byte[] answer) {
                long seq = seqOf(answer);
                recorder.record(seq, System.nanoTime() - sentAt[0]);
                if (seq + 1 == count + count / 4) {
                    leader[0].onCompleted();
                    done.countDown();
                    return;
                }
                sentAt[0] = System.nanoTime();
                leader[0].onNext(request(seq + 1));
            }
        });
        sentAt[0] = System.nanoTime();
        leader[0].onNext(request(0));
        done.await();
        channel.shutdownNow();
    }

    @SuppressWarnings("unchecked")
    private static StreamObserver<byte[]>[] streams(EpollEventLoopGroup group, java.util.function.LongConsumer onAck, int... ports) {
        StreamObserver<byte[]>[] out = new StreamObserver[ports.length];
        for (int i = 0; i < ports.length; i++) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", ports[i], InsecureChannelCredentials.create())
                    .eventLoopGroup(group).channelType(EpollSocketChannel.class).directExecutor().build();
            ClientCall<byte[], byte[]> call = channel.newCall(RELAY, CallOptions.DEFAULT.withWaitForReady());
            out[i] = ClientCalls.asyncBidiStreamingCall(call, new Relay() {
                @Override
                public void onNext(byte[] answer) {
                    onAck.accept(seqOf(answer));
                }
            });
        }
        return out;
    }

    private static Server serve(int port, java.util.function.Function<StreamObserver<byte[]>, Relay> handler) {
        ServerServiceDefinition service = ServerServiceDefinition.builder("floor.Probe")
                .addMethod(RELAY, ServerCalls.asyncBidiStreamingCall(handler::apply))
                .build();
        try {
            return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port), InsecureServerCredentials.create())
                    .directExecutor().addService(service).build().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + port, e);
        }
    }

    static byte[] request(long seq) {
        byte[] b = new byte[LatencyFloorProbe.REQUEST_BYTES];
        ByteBuffer.wrap(b).putLong(0, seq);
        return b;
    }

    static byte[] ack(long seq) {
        byte[] b = new byte[LatencyFloorProbe.ACK_BYTES];
        ByteBuffer.wrap(b).putLong(0, seq);
        return b;
    }

    static long seqOf(byte[] message) {
        return ByteBuffer.wrap(message).getLong(0);
    }

    /** A stream observer whose end either way calls {@link #closed}. */
    private abstract static class Relay implements StreamObserver<byte[]> {
        void closed() {
        }

        @Override
        public void onError(Throwable t) {
            closed();
        }

        @Override
        public void onCompleted() {
            closed();
        }
    }

    private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
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
