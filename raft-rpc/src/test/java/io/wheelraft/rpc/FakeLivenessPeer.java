package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
    private final AtomicInteger watchCalls = new AtomicInteger();
    private final AtomicInteger answersReceived = new AtomicInteger();
    private volatile ManagedChannel pinger;
    private volatile ScheduledExecutorService pingTimer;

    /** A peer that answers pings both ways, each its own call or many on one call. */
    FakeLivenessPeer() {
        this(true);
    }

    /** {@code streamed} false: a peer of an older version, whose only ping is a call of its own. */
    FakeLivenessPeer(boolean streamed) {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(streamed ? new StreamedPings() : new UnaryPings())
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

    private class UnaryPings extends LivenessGrpc.LivenessImplBase {
        @Override
        public void ping(PingRequest request, StreamObserver<PingResponse> answer) {
            if (received(request)) {
                answer.onNext(answer());
                answer.onCompleted();
            }
            // else: never answered; the pinger's deadline ends the call
        }
    }

    private final class StreamedPings extends UnaryPings {
        @Override
        public StreamObserver<PingRequest> watch(StreamObserver<PingResponse> answers) {
            watchCalls.incrementAndGet();
            return new StreamObserver<>() {
                @Override
                public void onNext(PingRequest request) {
                    if (received(request)) {
                        answers.onNext(answer());
                    }
                    // else: never answered; the pinger gives up on the call after the silence allowed
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    answers.onCompleted();
                }
            };
        }
    }

    /** Counts the ping; whether to answer it. */
    private boolean received(PingRequest request) {
        pingsFrom.computeIfAbsent(request.getEndpoint(), e -> new AtomicInteger()).incrementAndGet();
        return answering;
    }

    private PingResponse answer() {
        return PingResponse.newBuilder().setEndpoint(endpoint()).setIncarnation(incarnation).build();
    }

    /**
     * Pings {@code target} as a transport does, on one long-lived call: the next ping
     * {@code intervalMs} after each answer, until {@link #stopPinging()}.
     */
    void startPinging(String target, long intervalMs) {
        ManagedChannel channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        pinger = channel;
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        pingTimer = timer;
        PingRequest ping = PingRequest.newBuilder().setEndpoint(endpoint()).setIncarnation(incarnation).build();
        StreamObserver<PingRequest>[] out = new StreamObserver[1];
        out[0] = LivenessGrpc.newStub(channel).watch(new StreamObserver<>() {
            @Override
            public void onNext(PingResponse answer) {
                answersReceived.incrementAndGet();
                try {
                    timer.schedule(() -> {
                        synchronized (out) {
                            out[0].onNext(ping);
                        }
                    }, intervalMs, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.RejectedExecutionException stopped) {
                    // stopPinging() ran
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        });
        synchronized (out) {
            out[0].onNext(ping);
        }
    }

    /** Stops the pings {@link #startPinging} sends. */
    void stopPinging() {
        if (pingTimer != null) {
            pingTimer.shutdownNow();
            pinger.shutdownNow();
        }
    }

    /** Answers this peer's own pings received. */
    int answersReceived() {
        return answersReceived.get();
    }

    /** Long-lived ping calls opened to this peer, by anyone. */
    int watchCalls() {
        return watchCalls.get();
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
        stopPinging();
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
