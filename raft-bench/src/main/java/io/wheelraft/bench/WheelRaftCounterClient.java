package io.wheelraft.bench;

import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.IncrRequest;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Drives WheelRaft's counter service ({@code raft-example}'s gRPC {@code CounterService.Incr})
 * asynchronously. Every slot is one exactly-once client session (its own client id, sequence
 * numbers increasing by one per request), as the counter's contract asks. Requests go to the
 * believed leader; a NOT_LEADER answer moves the guess to the hinted node and fails that request
 * (the load retries it as a new one).
 *
 * <p>Thread-safe under {@link CounterClient}'s one-request-per-slot rule.
 */
final class WheelRaftCounterClient extends WheelRaftClientBase {

    WheelRaftCounterClient(List<String> endpoints) {
        super(endpoints);
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        String target = leader();
        IncrRequest request = nextIncrement(slot);
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

    @Override
    public void close() {
        closeChannels();
    }
}
