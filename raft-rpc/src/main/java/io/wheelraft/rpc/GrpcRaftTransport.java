package io.wheelraft.rpc;

import com.google.protobuf.MessageLite;
import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;
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
import io.wheelraft.rpc.proto.LivenessGrpc;
import io.wheelraft.rpc.proto.RaftServiceGrpc;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC implementation of {@link RaftTransport}: one per process, serving every Raft group in
 * it. It owns the process's server (Raft traffic, the admin service over {@link #nodes()}, and any
 * application services given to the builder, all on one port) and one channel per remote
 * endpoint, shared by all groups.
 *
 * <p>AppendEntries, votes, TimeoutNow and ReadIndex of every group travel on one long-lived
 * stream per remote endpoint ({@link PeerPipe}), in send order and many to a message (a timer
 * heartbeat waits up to {@link RpcOptions#heartbeatBatchDelayMs()} for company; the rest leave
 * at once with whatever is queued), so a process pair exchanges a few messages per heartbeat
 * interval however many groups it shares; InstallSnapshot chunks are unary asynchronous calls.
 * Each call carries the caller's deadline ({@code timeoutMs}, derived by the node from its
 * election timeout). Entry payloads are
 * {@code ByteString}s written straight into the HTTP/2 frames. Futures complete on a gRPC I/O
 * thread: dependents must not block. A call over {@link RpcOptions#maxMessageBytes()} or over the
 * endpoint's in-flight byte budget fails at once with {@link Kind#REJECTED}.
 *
 * <p>Connection loss (see {@link ConnectionListener}) is reported from both directions: an inbound
 * connection that carried a peer's requests closing (how a follower learns at once that its
 * leader died), and an outbound channel failing after it was connected. On top of that, unless
 * {@link RpcOptions#livenessWatchEnabled() turned off}, a liveness heartbeat ({@link LivenessWatch})
 * pings every remote endpoint this transport has a channel to, once per
 * {@link RpcOptions#livenessIntervalMs() interval} and process pair whatever the number of groups,
 * and reports one that gives no sign of life for {@link RpcOptions#livenessSilenceMs()} (a
 * partition, a stopped host: no reset to notice), so {@link #reportsSilentPeers()} and groups may
 * go quiet. Each answer names the incarnation of the process that gave it (random per transport):
 * an endpoint reported lost that answers again is reported restored, one that restarted is
 * reported lost (unless it already was) and restored. One loss is reported once, whichever of the
 * three noticed it first ({@link ConnectionListeners}). The server answers pings whether or not
 * this transport watches its own peers.
 *
 * <p>Thread-safe.
 */
public final class GrpcRaftTransport implements RaftTransport {

    /** A connection attempt after a break that takes longer than this says nothing (the process may be cut off, not gone). */
    private static final int GONE_PROBE_TIMEOUT_MS = 500;

    private final RpcOptions options;
    private final HandlerRegistry handlers = new HandlerRegistry();
    private final NodeRegistry nodes;
    private final ConnectionListeners listeners = new ConnectionListeners();
    private final ScheduledExecutorService scheduler;
    private final ChannelPool channels;
    private final GrpcRaftServer server;
    private final InboundConnectionTracker inbound;
    private final TransportEventLoops loops;
    /** Tells this process from an earlier or later one at the same address, in liveness answers. */
    private final long incarnation;
    private final LivenessWatch liveness;
    private volatile boolean closed;

    private GrpcRaftTransport(Builder b) {
        this.options = b.options;
        this.nodes = b.nodes;
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, GrpcRaftServer.daemonThreads("wheelraft-rpc-timer"));
        timers.setRemoveOnCancelPolicy(true); // most call deadlines are cancelled: do not keep them queued
        this.scheduler = timers;
        this.loops = TransportEventLoops.create(options.ioThreads());
        this.channels = new ChannelPool(options, listeners, scheduler, loops);
        listeners.probeBreaksWith(new PeerGoneProbe(loops, listeners, GONE_PROBE_TIMEOUT_MS));
        this.incarnation = newIncarnation();
        this.liveness = new LivenessWatch(channels, scheduler, options, new IoLag(loops.loops()));
        InboundConnectionTracker tracker = new InboundConnectionTracker(listeners);
        this.inbound = tracker;
        RaftServiceImpl raftService = new RaftServiceImpl(handlers, tracker, new InFlightBytes(options.maxInboundInFlightBytes()),
                scheduler, options.heartbeatBatchDelayMs(), options.maxMessageBytes());
        List<BindableService> services = new ArrayList<>(b.services);
        services.add(new AdminServiceImpl(nodes));
        services.add(new LivenessService(this::endpoint, incarnation, liveness::pingedBy));
        java.util.Set<String> inline = new java.util.HashSet<>(b.inlineServices);
        inline.add(LivenessGrpc.SERVICE_NAME); // a ping must not wait behind application work
        this.server = new GrpcRaftServer(b.host, b.port, options, raftService, tracker, services, inline, loops);
    }

    private static long newIncarnation() {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong();
        } while (id == 0); // 0 means "unknown" in liveness answers
        return id;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The port the server listens on (the real one when the builder asked for 0). */
    public int port() {
        return server.port();
    }

    /** {@code host:port} this transport listens on. */
    public String endpoint() {
        return server.endpoint();
    }

    /** The nodes the admin service can reach; register each node of the process here. */
    public NodeRegistry nodes() {
        return nodes;
    }

    /** Connections peers have open to this server (for tests and diagnostics). */
    int inboundConnections() {
        return inbound.liveConnections();
    }

    /** Outbound channels open, one per remote endpoint however many groups talk to it (tests and diagnostics). */
    int outboundChannels() {
        return channels.size();
    }

    /** This transport's incarnation, as its liveness answers give it (tests and diagnostics). */
    long incarnation() {
        return incarnation;
    }

    /** Liveness pings sent since start, to all endpoints (tests and diagnostics). */
    long livenessPingsSent() {
        return liveness.pingsSent();
    }

    /** Liveness pings answered since start, by all endpoints (tests and diagnostics). */
    long livenessPingsAnswered() {
        return liveness.pingsAnswered();
    }

    /** Liveness checks made while this transport's event loops were behind (tests and diagnostics). */
    long livenessIoLagged() {
        return liveness.ioLagged();
    }

    /** The event loops this transport runs on (tests). */
    TransportEventLoops eventLoops() {
        return loops;
    }

    /** Messages sent on the peer streams to every endpoint since start (tests and diagnostics). */
    long peerMessagesSent() {
        long[] sum = {0};
        channels.forEach(r -> sum[0] += r.pipe().messagesSent());
        return sum[0];
    }

    /** Peer streams opened to every endpoint since start (tests and diagnostics). */
    long peerStreamsOpened() {
        long[] sum = {0};
        channels.forEach(r -> sum[0] += r.pipe().streamsOpened());
        return sum[0];
    }

    /** Requests those messages carried (tests and diagnostics). */
    long peerRequestsSent() {
        long[] sum = {0};
        channels.forEach(r -> sum[0] += r.pipe().framesSent());
        return sum[0];
    }

    /** Messages of answers received on the peer streams (tests and diagnostics). */
    long peerAnswerMessagesReceived() {
        long[] sum = {0};
        channels.forEach(r -> sum[0] += r.pipe().answerMessagesReceived());
        return sum[0];
    }

    /** Tests: waits until at least {@code count} peers have a connection open to this server; false on timeout. */
    boolean awaitInboundConnections(int count, long timeoutMs) throws InterruptedException {
        return inbound.awaitLiveConnections(count, timeoutMs);
    }

    @Override
    public void register(String groupId, PeerId self, RaftRequestHandler handler) {
        handlers.register(groupId, self, handler);
    }

    @Override
    public void unregister(String groupId, PeerId self) {
        handlers.unregister(groupId, self);
    }

    @Override
    public CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs) {
        return viaPipe(PeerPipe.Op.REQUEST_VOTE, target, request, timeoutMs);
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> appendEntries(PeerId target, AppendEntriesRequest request, long timeoutMs) {
        return viaPipe(PeerPipe.Op.APPEND_ENTRIES, target, request, timeoutMs);
    }

    /**
     * Sends on the endpoint's peer stream ({@link PeerPipe}). No per-call label is built here
     * (the replication hot path): the pipe names its endpoint in errors, and a refusal builds its
     * message only when it happens.
     */
    private <R> CompletableFuture<R> viaPipe(PeerPipe.Op op, PeerId target, MessageLite request, long timeoutMs) {
        ChannelPool.Remote remote = admit(op.label, target, request, timeoutMs);
        if (remote == null) {
            return admissionFailure(op.label + " to " + target, target, request);
        }
        int size = request.getSerializedSize();
        return remote.pipe().send(op, request, timeoutMs, () -> remote.inFlight().release(size));
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId target, InstallSnapshotRequest request, long timeoutMs) {
        return call("InstallSnapshot", RaftServiceGrpc.getInstallSnapshotMethod(), target, request, timeoutMs);
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId target, TimeoutNowRequest request, long timeoutMs) {
        return viaPipe(PeerPipe.Op.TIMEOUT_NOW, target, request, timeoutMs);
    }

    @Override
    public CompletableFuture<ReadIndexResponse> readIndex(PeerId target, ReadIndexRequest request, long timeoutMs) {
        return viaPipe(PeerPipe.Op.READ_INDEX, target, request, timeoutMs);
    }

    /**
     * The Netty event loop running the calling thread, when it is a loop of a WheelRaft gRPC
     * transport (Raft traffic and inline services, such as the counter's client stream, are
     * delivered on these threads); null on any other thread. A task posted from a loop to itself
     * joins its task queue and runs after the current reads, with no wake-up.
     */
    @Override
    public Executor laterOnCallingThread() {
        return TransportEventLoops.currentLoop();
    }

    /**
     * Opens the channel to {@code peer} and connects it, on the transport's timer thread (building
     * a channel takes milliseconds, and the caller may be a node's lane). From then on the
     * channel's watcher keeps it connected. A channel that is connected already needs nothing: the
     * groups of a process share one channel per peer process, and a process starting 100,000 groups
     * otherwise queued 200,000 tasks on that one timer thread to find it so.
     */
    @Override
    public void prepareConnection(PeerId peer) {
        Objects.requireNonNull(peer, "peer");
        if (closed) {
            return;
        }
        ChannelPool.Remote known = channels.peek(peer.endpoint());
        if (known != null && known.channel().getState(false) == ConnectivityState.READY) {
            return;
        }
        try {
            scheduler.execute(() -> {
                ChannelPool.Remote remote = channels.get(peer.endpoint());
                if (remote != null) {
                    remote.channel().getState(true);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing: nothing to prepare
        }
    }

    /** True unless the liveness watch was turned off ({@link RpcOptions.Builder#livenessWatch}). */
    @Override
    public boolean reportsSilentPeers() {
        return options.livenessWatchEnabled();
    }

    /**
     * The silence allowed plus two ping intervals: the silence is checked once per interval, and
     * a peer found silent is reported at the next check, once this process's event loops have
     * shown they are not the ones behind ({@link IoLag}).
     */
    @Override
    public long silentPeerDetectMs() {
        if (!options.livenessWatchEnabled()) {
            return Long.MAX_VALUE;
        }
        long silence = options.livenessSilenceMs();
        long interval = options.livenessIntervalMs();
        return silence > Long.MAX_VALUE - 2 * interval ? Long.MAX_VALUE : silence + 2 * interval;
    }

    @Override
    public void addConnectionListener(ConnectionListener listener) {
        listeners.add(listener);
    }

    @Override
    public void removeConnectionListener(ConnectionListener listener) {
        listeners.remove(listener);
    }

    /**
     * Stops the server and closes every channel. Calls still open fail with {@link Kind#CLOSED};
     * nothing is reported to connection listeners (this is not a peer failure). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        listeners.silence();
        liveness.stop();
        handlers.clear();
        channels.close();
        server.close();
        loops.close();
        scheduler.shutdownNow();
    }

    /**
     * Checks a call and reserves its bytes in the endpoint's in-flight budget; null if the call may
     * not go out (then {@link #admissionFailure} says why).
     */
    private ChannelPool.Remote admit(String what, PeerId target, MessageLite request, long timeoutMs) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(request, "request");
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException(what + ": timeoutMs must be positive, got " + timeoutMs);
        }
        int size = request.getSerializedSize();
        if (closed || size > options.maxMessageBytes()) {
            return null;
        }
        ChannelPool.Remote remote = channels.get(target.endpoint());
        if (remote == null || !remote.inFlight().tryAcquire(size)) {
            return null;
        }
        return remote;
    }

    private <R> CompletableFuture<R> admissionFailure(String what, PeerId target, MessageLite request) {
        int size = request.getSerializedSize();
        TransportException e;
        if (closed) {
            e = new TransportException(Kind.CLOSED, what + ": transport is closed");
        } else if (size > options.maxMessageBytes()) {
            e = new TransportException(Kind.REJECTED, what + ": request of " + size + " bytes exceeds maxMessageBytes " + options.maxMessageBytes());
        } else {
            ChannelPool.Remote remote = channels.get(target.endpoint());
            e = remote == null
                    ? new TransportException(Kind.CLOSED, what + ": transport is closed")
                    : new TransportException(Kind.REJECTED, what + ": " + remote.inFlight().used() + " bytes already in flight to "
                    + target.endpoint() + " (limit " + remote.inFlight().limit() + ")");
        }
        return CompletableFuture.failedFuture(e);
    }

    private <Q extends MessageLite, R> CompletableFuture<R> call(String op, MethodDescriptor<Q, R> method, PeerId target,
                                                                Q request, long timeoutMs) {
        String what = op + " to " + target;
        ChannelPool.Remote remote = admit(what, target, request, timeoutMs);
        if (remote == null) {
            return admissionFailure(what, target, request);
        }
        int size = request.getSerializedSize();
        CompletableFuture<R> result = new CompletableFuture<>();
        StreamObserver<R> observer = new StreamObserver<>() {
            private R response;

            @Override
            public void onNext(R value) {
                response = value;
            }

            @Override
            public void onError(Throwable t) {
                remote.inFlight().release(size);
                result.completeExceptionally(TransportErrors.of(what, t, closed));
            }

            @Override
            public void onCompleted() {
                remote.inFlight().release(size);
                remote.liveness().heard(System.nanoTime());
                result.complete(response);
            }
        };
        try {
            ClientCalls.asyncUnaryCall(
                    remote.channel().newCall(method, CallOptions.DEFAULT.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)),
                    request, observer);
        } catch (RuntimeException e) {
            remote.inFlight().release(size);
            result.completeExceptionally(TransportErrors.of(what, e, closed));
        }
        return result;
    }

    /** Configures and starts a transport; not thread-safe. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private RpcOptions options = RpcOptions.defaults();
        private NodeRegistry nodes = new NodeRegistry();
        private final List<BindableService> services = new ArrayList<>();
        private final java.util.Set<String> inlineServices = new java.util.HashSet<>();

        private Builder() {
        }

        /** Where the server listens; port 0 picks a free port (tests). Default 127.0.0.1:0. */
        public Builder listen(String host, int port) {
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("listen host must not be empty");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("listen port " + port + " is outside 0..65535");
            }
            this.host = host;
            this.port = port;
            return this;
        }

        public Builder options(RpcOptions options) {
            this.options = Objects.requireNonNull(options, "options");
            return this;
        }

        /** The registry the admin service looks nodes up in (default: a new, empty one). */
        public Builder nodes(NodeRegistry nodes) {
            this.nodes = Objects.requireNonNull(nodes, "nodes");
            return this;
        }

        /** An application service served on the same port; its calls run on worker threads. */
        public Builder addService(BindableService service) {
            services.add(Objects.requireNonNull(service, "service"));
            return this;
        }

        /**
         * An application service whose handlers never block (they only hand work to a node and
         * answer from its callbacks): its calls run on the connection's I/O thread, like Raft
         * traffic, saving a thread hop per call. A handler that blocks there stalls every call on
         * that connection, so anything that may block belongs in {@link #addService}.
         */
        public Builder addNonBlockingService(BindableService service) {
            addService(service);
            inlineServices.add(service.bindService().getServiceDescriptor().getName());
            return this;
        }

        /**
         * Binds the port and starts serving.
         *
         * @throws java.io.UncheckedIOException if the port cannot be bound
         */
        public GrpcRaftTransport start() {
            GrpcRaftTransport t = new GrpcRaftTransport(this);
            try {
                t.server.start();
            } catch (RuntimeException e) {
                t.close();
                throw e;
            }
            if (t.options.livenessWatchEnabled()) {
                t.liveness.start(t.endpoint(), t.incarnation);
            }
            return t;
        }
    }
}
