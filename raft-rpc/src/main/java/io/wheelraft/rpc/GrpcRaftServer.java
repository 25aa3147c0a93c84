package io.wheelraft.rpc;

import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Server;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.wheelraft.rpc.proto.RaftServiceGrpc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one gRPC server of a process: hosts {@code RaftService} for every group registered with the
 * transport, the admin service and any application services (the counter), all on one port.
 *
 * <p>Raft requests are dispatched on the connection's I/O thread (handlers only post to their
 * node), which keeps per-connection order; application services run on a small worker pool so a
 * slow one cannot stall replication. Start once, close once; thread-safe.
 */
final class GrpcRaftServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GrpcRaftServer.class);
    private static final String RAFT_SERVICE = RaftServiceGrpc.SERVICE_NAME;

    private final Server server;
    private final ExecutorService workers;
    private final String host;
    /** The port bound by {@link #start()}, kept so the endpoint can still be named once the server is closed. */
    private volatile int boundPort = -1;

    GrpcRaftServer(String host, int port, RpcOptions options, RaftServiceImpl raftService,
                   InboundConnectionTracker connections, List<BindableService> services, java.util.Set<String> inlineServices,
                   TransportEventLoops loops) {
        this.host = host;
        ServerCredentials credentials = options.tls() == null ? InsecureServerCredentials.create() : options.tls().serverCredentials();
        this.workers = Executors.newFixedThreadPool(options.serverWorkerThreads(), daemonThreads("wheelraft-rpc-worker"));
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(host, port), credentials)
                // Every call starts on its connection's I/O thread, in arrival order: a pooled default
                // executor would look methods up concurrently and reorder pipelined requests.
                .directExecutor()
                .callExecutor(new ServerCallExecutorSupplier() {
                    @Override
                    public <Q, R> Executor getExecutor(ServerCall<Q, R> call, Metadata metadata) {
                        // Raft traffic and non-blocking services stay on the I/O thread (ordered, no
                        // hop per message); other application services may block and move to the workers.
                        String service = call.getMethodDescriptor().getServiceName();
                        return RAFT_SERVICE.equals(service) || inlineServices.contains(service) ? null : workers;
                    }
                })
                .maxInboundMessageSize(options.maxMessageBytes())
                .maxInboundMetadataSize(16 * 1024)
                .keepAliveTime(options.keepAliveTimeMs(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(options.keepAliveTimeoutMs(), TimeUnit.MILLISECONDS)
                .permitKeepAliveTime(Math.min(options.keepAliveTimeMs(), 1000), TimeUnit.MILLISECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addTransportFilter(connections)
                .addService(ServerInterceptors.intercept(
                        MalformedRequests.rejectAsInvalidArgument(raftService.bindService()), connections));
        for (BindableService s : services) {
            ServerServiceDefinition def = MalformedRequests.rejectAsInvalidArgument(s.bindService());
            b.addService(def);
        }
        this.server = loops.applyTo(b).build();
    }

    void start() {
        try {
            server.start();
        } catch (IOException e) {
            workers.shutdownNow();
            throw new UncheckedIOException("cannot listen on " + host + ":" + requestedPort() + ": " + e.getMessage(), e);
        }
        boundPort = server.getPort();
        LOG.info("gRPC server listening on {}", endpoint());
    }

    int port() {
        int p = boundPort;
        return p >= 0 ? p : server.getPort();
    }

    String endpoint() {
        return host + ":" + port();
    }

    /** Stops accepting, fails calls still open, and waits briefly for the server to finish. */
    @Override
    public void close() {
        server.shutdownNow();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("gRPC server on {} did not terminate within 5 s", host);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
    }

    private int requestedPort() {
        try {
            return server.getPort();
        } catch (IllegalStateException e) {
            return -1;
        }
    }

    static java.util.concurrent.ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
