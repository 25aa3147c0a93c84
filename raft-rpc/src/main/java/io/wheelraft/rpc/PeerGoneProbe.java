package io.wheelraft.rpc;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.ConnectTimeoutException;
import io.wheelraft.core.PeerId;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.Locale;

/**
 * After a connection to an endpoint broke, one new TCP connection to it (closed as soon as it is
 * made, without a byte sent): refused means no process listens at that address, so the one that
 * served there is gone: it died, and its kernel closed its sockets. Listeners are then told
 * ({@link ConnectionListeners#fireGone}), and a follower that lost its leader that way need not
 * wait for a heartbeat that can no longer come (see Election in raft-core).
 *
 * <p>Only a refusal counts. A connection made means the process (or a new one) is there, the
 * connection only flapped; a timeout or an unreachable network says nothing about the process.
 * A firewall that answers with resets would look like a refusal: that costs an early election,
 * never safety, since the follower still waits out any read lease (the leader's heartbeats say
 * whether one may rest on them).
 *
 * <p>Non-blocking: the connection attempt runs on the transport's event loops. Thread-safe.
 */
final class PeerGoneProbe {

    private final TransportEventLoops loops;
    private final ConnectionListeners listeners;
    private final int timeoutMs;

    PeerGoneProbe(TransportEventLoops loops, ConnectionListeners listeners, int timeoutMs) {
        this.loops = loops;
        this.listeners = listeners;
        this.timeoutMs = timeoutMs;
    }

    /** Tries {@code endpoint} ({@code host:port}) once; a refusal reports loss {@code lossEpoch} of it as gone. */
    void probe(String endpoint, long lossEpoch) {
        PeerId address;
        try {
            address = PeerId.parse(endpoint); // as the transport's channels read it (RaftChannels)
        } catch (IllegalArgumentException e) {
            return; // not host:port: nothing to try (the transport would not have reached it either)
        }
        try {
            // Unresolved: a host name is resolved on the channel's event loop, not on the caller's thread.
            ChannelFuture attempt = loops.applyTo(new Bootstrap())
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(InetSocketAddress.createUnresolved(address.host(), address.port()));
            attempt.addListener((ChannelFuture f) -> {
                if (f.isSuccess()) {
                    f.channel().close();
                } else if (refused(f.cause())) {
                    listeners.fireGone(endpoint, lossEpoch);
                }
            });
        } catch (RuntimeException e) {
            // the loops are shutting down with the transport: nothing to report
        }
    }

    /** A refused connection (ECONNREFUSED), as opposed to a timeout, an unreachable network or anything else. */
    static boolean refused(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof ConnectTimeoutException) {
                return false;
            }
            if (t instanceof ConnectException && t.getMessage() != null
                    && t.getMessage().toLowerCase(Locale.ROOT).contains("connection refused")) {
                return true;
            }
        }
        return false;
    }
}
