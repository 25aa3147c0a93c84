package io.wheelraft.rpc;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.ConnectTimeoutException;
import io.wheelraft.core.PeerId;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * After a connection to an endpoint broke, one new TCP connection to it (closed as soon as it is
 * made, without a byte sent): refused means no process listens at that address, so the one that
 * served there is gone: it died, and its kernel closed its sockets. Listeners are then told
 * ({@link ConnectionListeners#fireGone}), and a follower that lost its leader that way need not
 * wait for a heartbeat that can no longer come (see Election in raft-core).
 *
 * <p>Only a refusal counts. A connection made and held means the process (or a new one) is there,
 * the connection only flapped; a timeout or an unreachable network says nothing about the process.
 * A killed process's kernel closes its sockets one by one, so the break can arrive while its
 * listening socket still takes connections for a moment: a connection that the other side
 * closes within {@link #HOLD_MS} is not taken as an answer, and the endpoint is tried again (at
 * most {@link #ATTEMPTS} times in all).
 * A firewall that answers with resets would look like a refusal: that costs an early election,
 * never safety, since the follower still waits out any read lease (the leader's heartbeats say
 * whether one may rest on them).
 *
 * <p>Non-blocking: the connection attempt runs on the transport's event loops. Thread-safe.
 */
final class PeerGoneProbe {

    /** How long a probe connection is kept open to see whether the other side drops it. */
    static final long HOLD_MS = 250;
    /** Connection attempts per break, counting the first. */
    static final int ATTEMPTS = 3;

    private final TransportEventLoops loops;
    private final ConnectionListeners listeners;
    private final int timeoutMs;

    PeerGoneProbe(TransportEventLoops loops, ConnectionListeners listeners, int timeoutMs) {
        this.loops = loops;
        this.listeners = listeners;
        this.timeoutMs = timeoutMs;
    }

    /** Tries {@code endpoint} ({@code host:port}); a refusal reports loss {@code lossEpoch} of it as gone. */
    void probe(String endpoint, long lossEpoch) {
        PeerId address;
        try {
            address = PeerId.parse(endpoint); // as the transport's channels read it (RaftChannels)
        } catch (IllegalArgumentException e) {
            return; // not host:port: nothing to try (the transport would not have reached it either)
        }
        attempt(endpoint, address, lossEpoch, 1);
    }

    private void attempt(String endpoint, PeerId address, long lossEpoch, int attempt) {
        try {
            // Unresolved: a host name is resolved on the channel's event loop, not on the caller's thread.
            ChannelFuture connecting = loops.applyTo(new Bootstrap())
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(InetSocketAddress.createUnresolved(address.host(), address.port()));
            connecting.addListener((ChannelFuture f) -> {
                if (f.isSuccess()) {
                    holdThenClose(f.channel(), () -> attempt(endpoint, address, lossEpoch, attempt + 1), attempt < ATTEMPTS);
                } else if (refused(f.cause())) {
                    listeners.fireGone(endpoint, lossEpoch);
                }
            });
        } catch (RuntimeException e) {
            // the loops are shutting down with the transport: nothing to report
        }
    }

    /**
     * Keeps a probe connection open for {@link #HOLD_MS}, then closes it; if the other side closes
     * it first (a listening socket of a process being torn down), {@code again} runs instead.
     */
    private static void holdThenClose(Channel channel, Runnable again, boolean mayTryAgain) {
        boolean[] closedByUs = {false}; // read and written on the channel's event loop only
        channel.eventLoop().schedule(() -> {
            closedByUs[0] = true;
            channel.close();
        }, HOLD_MS, TimeUnit.MILLISECONDS);
        channel.closeFuture().addListener(closed -> {
            if (!closedByUs[0] && mayTryAgain) {
                again.run();
            }
        });
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
