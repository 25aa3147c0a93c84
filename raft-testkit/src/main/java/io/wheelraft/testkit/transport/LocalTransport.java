package io.wheelraft.testkit.transport;

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

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The {@link RaftTransport} of one endpoint of a {@link LocalNetwork}: requests are handed to the
 * target node's handler directly (messages are immutable protobufs, so nothing is copied), and
 * answers come back through its future. Requests from one sender reach a node in send order,
 * because handlers only enqueue onto the node's serial lane. Thread-safe.
 */
public final class LocalTransport implements RaftTransport {

    private final LocalNetwork network;
    private final String endpoint;
    private final Map<String, RaftRequestHandler> handlers = new ConcurrentHashMap<>();
    private final List<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    LocalTransport(LocalNetwork network, String endpoint) {
        this.network = network;
        this.endpoint = endpoint;
    }

    public String endpoint() {
        return endpoint;
    }

    boolean isClosed() {
        return closed;
    }

    private static String key(String groupId, PeerId peer) {
        return groupId + "/" + peer;
    }

    @Override
    public void register(String groupId, PeerId self, RaftRequestHandler handler) {
        handlers.put(key(groupId, self), handler);
    }

    @Override
    public void unregister(String groupId, PeerId self) {
        handlers.remove(key(groupId, self));
    }

    private <R> CompletableFuture<R> call(PeerId target, String groupId, long timeoutMs,
                                          Function<RaftRequestHandler, CompletableFuture<R>> dispatch) {
        if (closed) {
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.CLOSED, "transport " + endpoint + " is closed"));
        }
        LocalTransport dest = network.find(target.endpoint());
        if (dest == null) {
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.UNREACHABLE, "no endpoint " + target.endpoint()));
        }
        RaftRequestHandler handler = dest.handlers.get(key(groupId, target));
        if (handler == null) {
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.NOT_FOUND, "no node " + groupId + "/" + target));
        }
        CompletableFuture<R> answer;
        try {
            answer = dispatch.apply(handler);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.REJECTED, e.toString(), e));
        }
        // The node's refusal reaches the caller as a TransportException, as over the network: its
        // own (a stopped node's NOT_FOUND) as is, anything else (a malformed request) as REJECTED.
        // Timeouts complete this dependent future, never the node's own answer.
        CompletableFuture<R> result = answer.exceptionallyCompose(error -> CompletableFuture.failedFuture(refusal(error, target)));
        if (!result.isDone()) {
            network.timer().newTimeout(t -> result.completeExceptionally(new TransportException(TransportException.Kind.TIMEOUT,
                    "no answer from " + target + " within " + timeoutMs + " ms")), timeoutMs, TimeUnit.MILLISECONDS);
        }
        return result;
    }

    private static TransportException refusal(Throwable error, PeerId target) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof TransportException te) {
            return te;
        }
        return new TransportException(TransportException.Kind.REJECTED, "request rejected by " + target + ": " + cause.getMessage(), cause);
    }

    @Override
    public CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs) {
        return call(target, request.getGroupId(), timeoutMs, h -> h.handleRequestVote(request));
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> appendEntries(PeerId target, AppendEntriesRequest request, long timeoutMs) {
        return call(target, request.getGroupId(), timeoutMs, h -> h.handleAppendEntries(request));
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId target, InstallSnapshotRequest request, long timeoutMs) {
        return call(target, request.getGroupId(), timeoutMs, h -> h.handleInstallSnapshot(request));
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId target, TimeoutNowRequest request, long timeoutMs) {
        return call(target, request.getGroupId(), timeoutMs, h -> h.handleTimeoutNow(request));
    }

    @Override
    public CompletableFuture<ReadIndexResponse> readIndex(PeerId target, ReadIndexRequest request, long timeoutMs) {
        return call(target, request.getGroupId(), timeoutMs, h -> h.handleReadIndex(request));
    }

    @Override
    public void addConnectionListener(ConnectionListener listener) {
        listeners.add(listener);
    }

    @Override
    public void removeConnectionListener(ConnectionListener listener) {
        listeners.remove(listener);
    }

    void connectionLost(String remote) {
        for (ConnectionListener l : listeners) {
            l.onConnectionLost(remote);
        }
    }

    @Override
    public void close() {
        closed = true;
        handlers.clear();
        listeners.clear();
    }
}
