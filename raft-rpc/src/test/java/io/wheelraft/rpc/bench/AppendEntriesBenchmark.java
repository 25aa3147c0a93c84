package io.wheelraft.rpc.bench;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import io.wheelraft.rpc.GrpcRaftTransport;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * AppendEntries over the gRPC transport on loopback, beside a plain gRPC unary echo (the floor).
 * Not a unit test: excluded from the normal build, run by hand (see docs/benchmarks.md). Prints a
 * table; asserts nothing.
 */
class AppendEntriesBenchmark {

    private static final int RTT_WARMUP = 3000;
    private static final int RTT_SAMPLES = 10000;
    private static final long THROUGHPUT_MS = 3000;

    @Test
    void run() throws Exception {
        System.out.println("| what | entry size | concurrency (in flight) x entries per request | result |");
        System.out.println("|---|---|---|---|");
        try (GrpcRaftTransport leader = GrpcRaftTransport.builder().start();
             GrpcRaftTransport follower = GrpcRaftTransport.builder().start()) {
            PeerId from = PeerId.parse(leader.endpoint());
            PeerId to = PeerId.parse(follower.endpoint());
            follower.register("bench", to, new NoopHandler());
            for (int size : new int[]{16, 1024}) {
                AppendEntriesRequest one = request(from, to, 1, size);
                double[] rtt = roundTrips(() -> leader.appendEntries(to, one, 5000));
                row("AppendEntries round trip", size, "1 x 1", latency(rtt));
                for (int[] shape : new int[][]{{1, 1}, {16, 1}, {64, 32}, {256, 32}}) {
                    AppendEntriesRequest batch = request(from, to, shape[1], size);
                    row("AppendEntries throughput", size, shape[0] + " x " + shape[1],
                            throughput(shape[0], shape[1], size, () -> leader.appendEntries(to, batch, 5000)));
                }
            }
        }
        Server echo = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(ServerServiceDefinition.builder("bench.Echo")
                        .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                            out.onNext(req);
                            out.onCompleted();
                        })).build())
                .build().start();
        ManagedChannel channel = RaftChannels.open("127.0.0.1:" + echo.getPort(), RpcOptions.defaults());
        try {
            for (int size : new int[]{16, 1024}) {
                byte[] payload = request(PeerId.parse("127.0.0.1:1"), PeerId.parse("127.0.0.1:2"), 1, size).toByteArray();
                Supplier<CompletableFuture<byte[]>> call = () -> {
                    CompletableFuture<byte[]> f = new CompletableFuture<>();
                    ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS)), payload,
                            new io.grpc.stub.StreamObserver<>() {
                                public void onNext(byte[] v) { f.complete(v); }
                                public void onError(Throwable t) { f.completeExceptionally(t); }
                                public void onCompleted() { }
                            });
                    return f;
                };
                row("plain gRPC unary echo round trip (floor)", size, "1 x 1", latency(roundTrips(call)));
                row("plain gRPC unary echo throughput", size, "64 x 1", throughput(64, 1, size, call));
            }
        } finally {
            channel.shutdownNow();
            echo.shutdownNow();
        }
    }

    private static double[] roundTrips(Supplier<? extends CompletableFuture<?>> call) throws Exception {
        for (int i = 0; i < RTT_WARMUP; i++) {
            call.get().get(5, TimeUnit.SECONDS);
        }
        double[] micros = new double[RTT_SAMPLES];
        for (int i = 0; i < RTT_SAMPLES; i++) {
            long t0 = System.nanoTime();
            call.get().get(5, TimeUnit.SECONDS);
            micros[i] = (System.nanoTime() - t0) / 1000.0;
        }
        Arrays.sort(micros);
        return micros;
    }

    private static String latency(double[] sorted) {
        return String.format(Locale.ROOT, "p50 %.0f µs, p99 %.0f µs", sorted[sorted.length / 2], sorted[(int) (sorted.length * 0.99)]);
    }

    private static String throughput(int window, int entriesPerCall, int entrySize, Supplier<? extends CompletableFuture<?>> call) throws Exception {
        Semaphore inFlight = new Semaphore(window);
        AtomicLong done = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long warmEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000);
        long end = warmEnd + TimeUnit.MILLISECONDS.toNanos(THROUGHPUT_MS);
        long countedFrom = -1;
        while (System.nanoTime() < end) {
            if (countedFrom < 0 && System.nanoTime() >= warmEnd) {
                countedFrom = done.get();
            }
            inFlight.acquire();
            call.get().whenComplete((r, e) -> {
                if (e != null) {
                    failed.incrementAndGet();
                }
                done.incrementAndGet();
                inFlight.release();
            });
        }
        inFlight.acquire(window);
        double seconds = THROUGHPUT_MS / 1000.0;
        double calls = (done.get() - Math.max(countedFrom, 0)) / seconds;
        double entries = calls * entriesPerCall;
        return String.format(Locale.ROOT, "%.0f calls/s, %.0f entries/s, %.1f MB/s payload%s", calls, entries,
                entries * entrySize / 1e6, failed.get() > 0 ? " (" + failed.get() + " failed)" : "");
    }

    private static void row(String what, int size, String shape, String result) {
        System.out.println("| " + what + " | " + size + " B | " + shape + " | " + result + " |");
    }

    private static AppendEntriesRequest request(PeerId from, PeerId to, int entries, int size) {
        AppendEntriesRequest.Builder b = AppendEntriesRequest.newBuilder().setGroupId("bench")
                .setServerId(from.toString()).setPeerId(to.toString()).setTerm(1);
        ByteString payload = ByteString.copyFrom(new byte[size]);
        for (int i = 0; i < entries; i++) {
            b.addEntries(LogEntry.newBuilder().setTerm(1).setIndex(i + 1).setType(EntryType.ENTRY_TYPE_DATA).setData(payload));
        }
        return b.build();
    }

    private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("bench.Echo/Echo")
            .setRequestMarshaller(new Bytes()).setResponseMarshaller(new Bytes()).build();

    private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
        public InputStream stream(byte[] value) { return new ByteArrayInputStream(value); }
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Answers every request at once: measures the transport, not a node. */
    private static final class NoopHandler implements RaftRequestHandler {
        private static final AppendEntriesResponse OK = AppendEntriesResponse.newBuilder().setSuccess(true).build();

        public CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest r) { return CompletableFuture.completedFuture(RequestVoteResponse.getDefaultInstance()); }
        public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest r) { return CompletableFuture.completedFuture(OK); }
        public CompletableFuture<InstallSnapshotResponse> handleInstallSnapshot(InstallSnapshotRequest r) { return CompletableFuture.completedFuture(InstallSnapshotResponse.getDefaultInstance()); }
        public CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest r) { return CompletableFuture.completedFuture(TimeoutNowResponse.getDefaultInstance()); }
        public CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest r) { return CompletableFuture.completedFuture(ReadIndexResponse.getDefaultInstance()); }
    }
}
