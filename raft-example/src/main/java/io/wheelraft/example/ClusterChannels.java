package io.wheelraft.example;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.wheelraft.proto.NodeSelector;
import io.wheelraft.proto.NodeStatusRequest;
import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import io.wheelraft.rpc.proto.AdminServiceGrpc;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client side of a counter cluster: one gRPC channel per node endpoint (opened on first use,
 * shared by every {@link CounterClient} of the process) and the current guess of who leads.
 * Channels to a node that was down are told to reconnect at once instead of waiting out gRPC's
 * reconnect backoff, so a restarted node is reachable as soon as it listens. Thread-safe.
 */
public final class ClusterChannels implements AutoCloseable {

    private final List<String> endpoints;
    private final RpcOptions options;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile String leaderGuess;
    private volatile boolean closed;

    /** @param endpoints the nodes' {@code host:port}, in the order given by the user */
    public ClusterChannels(List<String> endpoints) {
        this(endpoints, RpcOptions.defaults());
    }

    public ClusterChannels(List<String> endpoints, RpcOptions options) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("a cluster needs at least one endpoint");
        }
        this.endpoints = List.copyOf(endpoints);
        this.options = options;
    }

    public List<String> endpoints() {
        return endpoints;
    }

    /** The node believed to lead, or null. */
    public String leaderGuess() {
        return leaderGuess;
    }

    public void leaderIs(String endpoint) {
        leaderGuess = endpoint;
    }

    /** Forgets {@code endpoint} as leader (only if it still is the guess). */
    public void notLeader(String endpoint) {
        if (endpoint.equals(leaderGuess)) {
            leaderGuess = null;
        }
    }

    ManagedChannel channel(String endpoint) {
        if (closed) {
            throw new IllegalStateException("cluster channels are closed");
        }
        return channels.computeIfAbsent(endpoint, e -> RaftChannels.open(e, options));
    }

    /** True if the channel is connected: a failed call on it may have reached the node. */
    boolean connected(String endpoint) {
        return channel(endpoint).getState(false) == ConnectivityState.READY;
    }

    /** After a failure: reconnect now rather than after gRPC's growing backoff. */
    void reconnectSoon(String endpoint) {
        ManagedChannel c = channels.get(endpoint);
        if (c != null) {
            c.resetConnectBackoff();
        }
    }

    CounterServiceGrpc.CounterServiceBlockingStub counter(String endpoint, long timeoutMs) {
        return CounterServiceGrpc.newBlockingStub(channel(endpoint)).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * The status of the counter node at {@code endpoint}.
     *
     * @throws io.grpc.StatusRuntimeException if it does not answer in time
     */
    public NodeStatusResponse status(String endpoint, long timeoutMs) {
        try {
            return AdminServiceGrpc.newBlockingStub(channel(endpoint)).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
                    .status(NodeStatusRequest.newBuilder().setNode(NodeSelector.newBuilder().setGroupId(CounterServiceImpl.GROUP_ID)).build());
        } catch (io.grpc.StatusRuntimeException e) {
            reconnectSoon(endpoint);
            throw e;
        }
    }

    @Override
    public void close() {
        closed = true;
        channels.values().forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel c : channels.values()) {
            try {
                c.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
