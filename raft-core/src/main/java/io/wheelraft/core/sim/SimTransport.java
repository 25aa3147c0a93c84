package io.wheelraft.core.sim;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;

import java.util.concurrent.CompletableFuture;

/**
 * The {@link RaftTransport} of one simulated process, backed by {@link SimNetwork}. Once closed,
 * its calls fail at once with {@link TransportException.Kind#CLOSED}, as a real transport's do.
 * Simulation thread only.
 */
public final class SimTransport implements RaftTransport {

    private final SimNetwork network;
    private final String endpoint;
    private boolean closed;

    SimTransport(SimNetwork network, String endpoint) {
        this.network = network;
        this.endpoint = endpoint;
    }

    static String key(String groupId, PeerId peer) {
        return groupId + "/" + peer;
    }

    @Override
    public void register(String groupId, PeerId self, RaftRequestHandler handler) {
        network.process(endpoint).handlers.put(key(groupId, self), handler);
    }

    @Override
    public void unregister(String groupId, PeerId self) {
        network.process(endpoint).handlers.remove(key(groupId, self));
    }

    @Override
    public CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs) {
        if (closed) {
            return closedFailure();
        }
        return network.call(endpoint, target, request.getGroupId(), request, timeoutMs, h -> h.handleRequestVote(request));
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> appendEntries(PeerId target, AppendEntriesRequest request, long timeoutMs) {
        if (closed) {
            return closedFailure();
        }
        return network.call(endpoint, target, request.getGroupId(), request, timeoutMs, h -> h.handleAppendEntries(request));
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId target, InstallSnapshotRequest request, long timeoutMs) {
        if (closed) {
            return closedFailure();
        }
        return network.call(endpoint, target, request.getGroupId(), request, timeoutMs, h -> h.handleInstallSnapshot(request));
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId target, TimeoutNowRequest request, long timeoutMs) {
        if (closed) {
            return closedFailure();
        }
        return network.call(endpoint, target, request.getGroupId(), request, timeoutMs, h -> h.handleTimeoutNow(request));
    }

    @Override
    public CompletableFuture<ReadIndexResponse> readIndex(PeerId target, ReadIndexRequest request, long timeoutMs) {
        if (closed) {
            return closedFailure();
        }
        return network.call(endpoint, target, request.getGroupId(), request, timeoutMs, h -> h.handleReadIndex(request));
    }

    @Override
    public boolean reportsSilentPeers() {
        return network.watchesLiveness();
    }

    @Override
    public long silentPeerDetectMs() {
        return network.silentPeerDetectMs();
    }

    @Override
    public void addConnectionListener(ConnectionListener listener) {
        network.process(endpoint).listeners.add(listener);
    }

    @Override
    public void removeConnectionListener(ConnectionListener listener) {
        network.process(endpoint).listeners.remove(listener);
    }

    private <R> CompletableFuture<R> closedFailure() {
        return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.CLOSED, "transport of " + endpoint + " is closed"));
    }

    @Override
    public void close() {
        closed = true;
    }
}
