package io.wheelraft.bench;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Drives {@link RatisCounterServer}s through Ratis's async client ({@code RaftClient.async().send}),
 * over gRPC. One {@link RaftClient} serves every slot (it pipelines requests and follows the
 * leader itself); its limit of outstanding async requests is raised above the largest in-flight
 * count measured (the default, 100, would queue part of a 128-in-flight load in the client).
 *
 * <p>Thread-safe.
 */
final class RatisCounterClient implements CounterClient {

    private static final ByteString ONE = ByteString.copyFrom(ByteBuffer.allocate(Long.BYTES).putLong(0, 1L));

    private final RaftClient client;
    private final List<String> endpoints;

    RatisCounterClient(List<String> endpoints) {
        this.endpoints = List.copyOf(endpoints);
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Async.setOutstandingRequestsMax(properties, MAX_SLOTS);
        client = RaftClient.newBuilder().setProperties(properties).setRaftGroup(RatisCounterServer.group(endpoints)).build();
    }

    @Override
    public void awaitLeader(Duration timeout) throws InterruptedException {
        // The Ratis client logs every refused connection with its stack trace: start once all listen.
        if (!ServerCluster.awaitListening(endpoints, System.nanoTime() + timeout.toNanos())) {
            throw new IllegalStateException("Ratis: not every server of " + endpoints + " listened within " + timeout);
        }
        try {
            increment(0).get(timeout.toMillis(), TimeUnit.MILLISECONDS); // the client retries until a leader answers
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Ratis: no leader acknowledged an increment within " + timeout, e);
        }
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        return client.async().send(Message.valueOf(ONE)).thenApply(reply -> {
            if (!reply.isSuccess()) {
                throw new IllegalStateException("Ratis refused: " + reply.getException());
            }
            return reply.getMessage().getContent().asReadOnlyByteBuffer().getLong();
        });
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            throw new IllegalStateException("closing the Ratis client", e);
        }
    }
}
