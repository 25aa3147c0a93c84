package io.wheelraft.rpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.wheelraft.core.PeerId;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Opens gRPC channels to WheelRaft endpoints with the transport's settings (TLS, message size,
 * keep-alive, never idle). Used by the transport's channel pool and by clients such as the
 * counter's command line and {@link AdminClient}. Stateless.
 */
public final class RaftChannels {

    private RaftChannels() {
    }

    /**
     * A channel to {@code endpoint} ({@code host:port}). Callbacks run on the channel's I/O
     * threads: whatever completes from them must not block.
     *
     * @throws IllegalArgumentException if the endpoint is not {@code host:port}
     */
    public static ManagedChannel open(String endpoint, RpcOptions options) {
        return builder(endpoint, options).build();
    }

    /**
     * The event loop running the calling thread when it is one of a WheelRaft transport's loops
     * (its server's calls, with a direct executor, start and are served there), else null. A task
     * given to it runs on that thread after what the loop has queued already; a service that
     * writes a stream's messages from such a task lets whatever joins them meanwhile leave in the
     * same message.
     */
    public static Executor eventLoopOfCallingThread() {
        return TransportEventLoops.currentLoop();
    }

    /** Like {@link #open(String, RpcOptions)}, on the given event loops (a transport's own). */
    static ManagedChannel open(String endpoint, RpcOptions options, TransportEventLoops loops) {
        return loops.applyTo(builder(endpoint, options)).build();
    }

    private static NettyChannelBuilder builder(String endpoint, RpcOptions options) {
        PeerId address = PeerId.parse(endpoint);
        ChannelCredentials credentials = options.tls() == null ? InsecureChannelCredentials.create() : options.tls().channelCredentials();
        return NettyChannelBuilder.forAddress(address.host(), address.port(), credentials)
                .directExecutor()
                .maxInboundMessageSize(options.maxMessageBytes())
                .keepAliveTime(options.keepAliveTimeMs(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(options.keepAliveTimeoutMs(), TimeUnit.MILLISECONDS)
                .keepAliveWithoutCalls(true)
                // An idle channel would drop its connection, which the peer would take for our death.
                .idleTimeout(365, TimeUnit.DAYS)
                // Raft resends what matters itself; gRPC-level retries would only reorder requests.
                .disableRetry();
    }
}
