package io.wheelraft.rpc;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.LivenessGrpc;
import io.wheelraft.rpc.proto.PingRequest;
import io.wheelraft.rpc.proto.PingResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A peer process that only answers liveness pings, under the test's control: it can stop answering
 * without closing its connections (a hung or black-holed process, as seen from the pinger), and
 * answer as another incarnation (a restart faster than the silence allowed). Counts the pings it
 * received per sender endpoint. Thread-safe.
 */
final class FakeLivenessPeer implements AutoCloseable {

    private final Server server;
    private final Map<String, AtomicInteger> pingsFrom = new ConcurrentHashMap<>();
    private volatile boolean answering = true;
    private volatile long incarnation = 1001;

    FakeLivenessPeer() {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new LivenessGrpc.LivenessImplBase() {
                    @Override
                    public void ping(PingRequest request, StreamObserver<PingResponse> answer) {
                        pingsFrom.computeIfAbsent(request.getEndpoint(), e -> new AtomicInteger()).incrementAndGet();
                        if (answering) {
                            answer.onNext(PingResponse.newBuilder().setEndpoint(endpoint()).setIncarnation(incarnation).build());
                            answer.onCompleted();
                        }
                        // else: never answered; the pinger's deadline ends the call
                    }
                })
                .build();
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String endpoint() {
        return "127.0.0.1:" + server.getPort();
    }

    /** Whether pings get an answer; the connection stays open either way. */
    void answer(boolean on) {
        answering = on;
    }

    /** Answers from now on as another process at the same address. */
    void restartAs(long newIncarnation) {
        incarnation = newIncarnation;
    }

    /** Pings received from the transport at {@code endpoint}, answered or not. */
    int pingsFrom(String endpoint) {
        AtomicInteger n = pingsFrom.get(endpoint);
        return n == null ? 0 : n.get();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
