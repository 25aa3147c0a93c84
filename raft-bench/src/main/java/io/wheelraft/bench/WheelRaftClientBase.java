package io.wheelraft.bench;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.wheelraft.rpc.proto.counter.IncrRequest;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What both WheelRaft bench clients share: one exactly-once session per slot (its own client id,
 * sequence numbers increasing by one per request), the guess of which node leads (moved by a
 * NOT_LEADER hint or, failing one, to the next node), one channel per node, and waiting for a
 * leader. Subclasses send the increments.
 */
abstract class WheelRaftClientBase implements CounterClient {

    static final long DEADLINE_MS = 5_000;

    private final List<String> endpoints;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final String sessionPrefix = UUID.randomUUID().toString().substring(0, 8) + "-";
    private final long[] sequences = new long[MAX_SLOTS];
    private volatile String leader;
    private int rotation; // guarded by this

    WheelRaftClientBase(List<String> endpoints) {
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

    /** The next command of {@code slot}'s session: add 1. Called at most once at a time per slot. */
    IncrRequest nextIncrement(int slot) {
        return IncrRequest.newBuilder().setGroupId("counter").setClientId(sessionPrefix + slot)
                .setSequence(++sequences[slot]).setDelta(1).build();
    }

    String leader() {
        return leader;
    }

    /** {@code failed} did not take the request: move the guess to {@code hint}, or to the next node. */
    synchronized void moveLeader(String failed, String hint) {
        if (!failed.equals(leader)) {
            return; // someone already moved it
        }
        leader = !hint.isEmpty() ? hint : endpoints.get(Math.floorMod(++rotation, endpoints.size()));
    }

    ManagedChannel channel(String endpoint) {
        // directExecutor: answers are handled on the channel's I/O thread; the callback only records and sends the next request.
        return channels.computeIfAbsent(endpoint, e -> ManagedChannelBuilder.forTarget(e).usePlaintext().directExecutor().build());
    }

    void closeChannels() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
