package io.wheelraft.rpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.wheelraft.core.PeerId;

import java.net.SocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Turns the end of an inbound connection into a "connection lost" signal for the endpoints that
 * sent requests over it.
 *
 * <p>Why: in Raft the leader dials its followers, so on a follower the leader's traffic arrives
 * on an inbound connection from an ephemeral port. When the leader process dies its kernel
 * closes that socket at once; this filter sees the transport terminate and reports the leader's
 * own endpoint (taken from {@code server_id} of the requests it sent) within milliseconds.
 *
 * <p>A connection is only reported for endpoints that have no other live inbound connection that
 * carried their requests, so a sender that reconnected is not reported. Connections that never
 * carried a Raft request (garbage, health checks, clients) report nothing. Thread-safe: transport
 * callbacks come from I/O threads, {@link #noteSender} from request handling.
 */
final class InboundConnectionTracker extends ServerTransportFilter implements ServerInterceptor {

    /** How many distinct senders one connection may claim; more are ignored (bounds memory on abuse). */
    private static final int MAX_SENDERS_PER_CONNECTION = 64;

    private static final Attributes.Key<InboundConnection> CONNECTION = Attributes.Key.create("wheelraft.inbound-connection");
    private static final Context.Key<InboundConnection> CURRENT = Context.key("wheelraft.inbound-connection");

    private final ConnectionListeners listeners;
    private final Set<InboundConnection> live = ConcurrentHashMap.newKeySet();

    InboundConnectionTracker(ConnectionListeners listeners) {
        this.listeners = listeners;
    }

    @Override
    public Attributes transportReady(Attributes attrs) {
        InboundConnection c = new InboundConnection(attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        live.add(c);
        synchronized (live) {
            live.notifyAll(); // wakes awaitLiveConnections; connection set-up only, not per call
        }
        return attrs.toBuilder().set(CONNECTION, c).build();
    }

    @Override
    public void transportTerminated(Attributes attrs) {
        InboundConnection c = attrs == null ? null : attrs.get(CONNECTION);
        if (c == null || !live.remove(c)) {
            return;
        }
        for (String endpoint : c.senders.values()) {
            if (!carriedByAnotherLiveConnection(endpoint)) {
                listeners.fireLost(endpoint, "inbound connection from " + c.remote + " closed");
            }
        }
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        InboundConnection c = call.getAttributes().get(CONNECTION);
        if (c == null) {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(CURRENT, c), call, headers, next);
    }

    /**
     * Remembers that the connection of the current call carries requests from {@code senderId}
     * (a peer id); called only for requests that were routed to a node.
     */
    void noteSender(String senderId) {
        InboundConnection c = CURRENT.get();
        if (c == null || c.senders.containsKey(senderId) || c.senders.size() >= MAX_SENDERS_PER_CONNECTION) {
            return;
        }
        try {
            c.senders.putIfAbsent(senderId, PeerId.parse(senderId).endpoint());
        } catch (IllegalArgumentException ignored) {
            // Validated before routing; a sender id that does not parse simply is not tracked.
        }
    }

    /** Whether the current call's connection already carried requests from {@code senderId} (already validated). */
    boolean knowsSender(String senderId) {
        InboundConnection c = CURRENT.get();
        return c != null && c.senders.containsKey(senderId);
    }

    /** Inbound connections currently open (for tests and diagnostics). */
    int liveConnections() {
        return live.size();
    }

    /** Waits until at least {@code count} inbound connections are open; false if {@code timeoutMs} passed first (tests). */
    boolean awaitLiveConnections(int count, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (live) {
            while (live.size() < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(live, left);
            }
            return true;
        }
    }

    private boolean carriedByAnotherLiveConnection(String endpoint) {
        for (InboundConnection other : live) {
            if (other.senders.containsValue(endpoint)) {
                return true;
            }
        }
        return false;
    }

    /** One accepted connection and the senders seen on it (sender id -> its endpoint). */
    private static final class InboundConnection {
        final SocketAddress remote;
        final ConcurrentHashMap<String, String> senders = new ConcurrentHashMap<>();

        InboundConnection(SocketAddress remote) {
            this.remote = remote;
        }
    }
}
