package io.wheelraft.example;

import io.grpc.ManagedChannel;
import io.wheelraft.proto.GroupsSummaryRequest;
import io.wheelraft.proto.GroupsSummaryResponse;
import io.wheelraft.proto.NodeSelector;
import io.wheelraft.proto.NodeStatusRequest;
import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import io.wheelraft.client.RaftClient;
import io.wheelraft.client.RaftClientTransport;
import io.wheelraft.rpc.proto.AdminServiceGrpc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client side of a counter cluster: the {@link RaftClient} every {@link CounterClient} of a
 * group shares (one per group and probe setting, all on one {@link RaftClientTransport}, so many
 * groups share one connection per node and one timer), and one admin channel per node
 * endpoint for {@code status} and {@code admin} (opened on first use). Channels to a node that was
 * down are told to reconnect at once instead of waiting out gRPC's reconnect backoff, so a
 * restarted node is reachable as soon as it listens. Thread-safe.
 */
public final class ClusterChannels implements AutoCloseable {

    private final List<String> endpoints;
    private final RpcOptions options;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Map<String, RaftClient> clients = new ConcurrentHashMap<>();
    /** Opened with the first client (status and admin commands need none). */
    private RaftClientTransport transport;
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

    ManagedChannel channel(String endpoint) {
        if (closed) {
            throw new IllegalStateException("cluster channels are closed");
        }
        return channels.computeIfAbsent(endpoint, e -> RaftChannels.open(e, options));
    }

    /** After a failure: reconnect now rather than after gRPC's growing backoff. */
    void reconnectSoon(String endpoint) {
        ManagedChannel c = channels.get(endpoint);
        if (c != null) {
            c.resetConnectBackoff();
        }
    }

    /**
     * The counter's {@link RaftClient}, shared by all callers asking with the same
     * {@code silenceMs} (how long the believed leader may stay silent before the client asks the
     * others who leads). Closed with these channels.
     */
    RaftClient counterClient(long silenceMs) {
        return counterClient(CounterServiceImpl.GROUP_ID, silenceMs);
    }

    /** The {@link RaftClient} of counter group {@code groupId} (see {@link #counterClient(long)}). */
    RaftClient counterClient(String groupId, long silenceMs) {
        if (closed) {
            throw new IllegalStateException("cluster channels are closed");
        }
        return clients.computeIfAbsent(groupId + "/" + silenceMs, k -> RaftClient.builder().endpoints(endpoints).groupId(groupId)
                .transport(transport()).silenceBeforeProbe(java.time.Duration.ofMillis(silenceMs))
                // The command line's own load bounds what is outstanding; a full client would make
                // the load's completion callbacks (on gRPC threads) wait for a slot.
                .maxOutstanding(1 << 20).build());
    }

    private synchronized RaftClientTransport transport() {
        if (transport == null) {
            transport = RaftClientTransport.create(options);
        }
        return transport;
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

    /**
     * How many groups the process at {@code endpoint} hosts, leads and has quiet.
     *
     * @throws io.grpc.StatusRuntimeException if it does not answer in time
     */
    public GroupsSummaryResponse groupsSummary(String endpoint, long timeoutMs) {
        try {
            return AdminServiceGrpc.newBlockingStub(channel(endpoint)).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
                    .groupsSummary(GroupsSummaryRequest.getDefaultInstance());
        } catch (io.grpc.StatusRuntimeException e) {
            reconnectSoon(endpoint);
            throw e;
        }
    }

    @Override
    public void close() {
        closed = true;
        clients.values().forEach(RaftClient::close);
        synchronized (this) {
            if (transport != null) {
                transport.close();
            }
        }
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
