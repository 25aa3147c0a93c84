package io.wheelraft.bench;

import io.wheelraft.client.RaftClient;
import io.wheelraft.example.CounterServiceImpl;
import io.wheelraft.example.CounterStateMachine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Drives WheelRaft's counter the way any user of the library would: through the public
 * {@link RaftClient} async API, one {@code submitAsync} per increment, N of them outstanding and
 * independent (no batching in the application; the library shares one stream per server and
 * merges what is queued, as the SOFAJRaft and Ratis clients do for theirs). Slots do not matter
 * here: every call is its own exactly-once command of the one client.
 *
 * <p>Thread-safe: the RaftClient is.
 */
final class WheelRaftCounterClient implements CounterClient {

    private static final byte[] ADD_ONE = CounterStateMachine.encode(1);

    private final RaftClient client;

    WheelRaftCounterClient(List<String> endpoints) {
        this.client = RaftClient.builder().endpoints(endpoints).groupId(CounterServiceImpl.GROUP_ID)
                .timeout(Duration.ofSeconds(5)).maxOutstanding(MAX_SLOTS * 2).build();
    }

    @Override
    public void awaitLeader(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no attempt";
        while (System.nanoTime() - deadline < 0) {
            try {
                increment(0).get(6, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | TimeoutException e) {
                last = String.valueOf(e.getCause() == null ? e : e.getCause());
            }
        }
        throw new IllegalStateException("WheelRaft: no leader acknowledged an increment within " + timeout + "; last: " + last);
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        return client.submitAsync(ADD_ONE).thenApply(CounterStateMachine::decodeValue);
    }

    @Override
    public void close() {
        client.close();
    }
}
