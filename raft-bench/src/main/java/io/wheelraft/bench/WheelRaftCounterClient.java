package io.wheelraft.bench;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.IncrRequest;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Drives WheelRaft's counter service ({@code raft-example}'s gRPC {@code CounterService.Incr})
 * asynchronously. Every slot is one exactly-once client session (its own client id, sequence
 * numbers increasing by one per request), as the counter's contract asks. Requests go to the
 * believed leader; a NOT_LEADER answer moves the guess to the hinted node and fails that request
 * (the load retries it as a new one).
 *
 * <p>Thread-safe under {@link CounterClient}'s one-request-per-slot rule.
 */
final class WheelRaftCounterClient implements CounterClient {

    private static final long DEADLINE_MS = 5_000;

    private final List<String> endpoints;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final String sessionPrefix = UUID.randomUUID().toString().substring(0, 8) + "-";
    private final long[] sequences = new long[MAX_SLOTS];
    private volatile String leader;
    private int rotation;

    WheelRaftCounterClient(List<String> endpoints) {
        this.endpoints = List.copyOf(endpoints);
        this.leader = endpoints.get(0);
    }

    @Override
    public void awaitLeader(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no attempt";
        while (System.nanoTime() - deadline < 0) {
            try {
                increment(0).get(DEADLINE_MS + 1000, TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException | TimeoutException e) {
                last = String.valueOf(e.getCause() == null ? e : e.getCause());
                Thread.sleep(50); // an election is running; poll again shortly
            }
        }
        throw new IllegalStateException("WheelRaft: no leader acknowledged an increment within " + timeout + "; last: " + last);
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        String target = leader;
        IncrRequest request = IncrRequest.newBuilder().setGroupId("counter").setClientId(sessionPrefix + slot)
                .setSequence(++sequences[slot]).setDelta(1).build();
        CompletableFuture<Long> result = new CompletableFuture<>();
        CounterServiceGrpc.newStub(channel(target)).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                .incr(request, new StreamObserver<>() {
                    @Override
                    public void onNext(CounterResponse r) {
                        if (r.getOutcome() == CounterOutcome.COUNTER_OUTCOME_OK) {
                            result.complete(r.getValue());
                            return;
                        }
                        if (r.getOutcome() == CounterOutcome.COUNTER_OUTCOME_NOT_LEADER) {
                            moveLeader(target, r.getLeaderHint());
                        }
                        result.completeExceptionally(new IllegalStateException(target + ": " + r.getOutcome() + " " + r.getMessage()));
                    }

                    @Override
                    public void onError(Throwable t) {
                        moveLeader(target, "");
                        result.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        // the answer came in onNext
                    }
                });
        return result;
    }

    private synchronized void moveLeader(String failed, String hint) {
        if (!failed.equals(leader)) {
            return; // someone already moved it
        }
        leader = !hint.isEmpty() ? hint : endpoints.get(Math.floorMod(++rotation, endpoints.size()));
    }

    private ManagedChannel channel(String endpoint) {
        // directExecutor: answers are handled on the channel's I/O thread; the callback only records and sends the next request.
        return channels.computeIfAbsent(endpoint, e -> ManagedChannelBuilder.forTarget(e).usePlaintext().directExecutor().build());
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
