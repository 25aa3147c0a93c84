package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One channel (one HTTP/2 connection) per remote endpoint, shared by every group and peer of
 * this process that talks to it, with its in-flight byte budget, a connection watcher and its
 * liveness state (watched by the {@link LivenessWatch} from the moment the channel opens, when
 * the liveness watch is on). Channels are opened on first use and live until {@link #close()}.
 * Thread-safe.
 */
final class ChannelPool implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ChannelPool.class);

    /** A remote endpoint's channel, the bytes currently in flight to it, and what is known of its liveness. */
    record Remote(ManagedChannel channel, InFlightBytes inFlight, PeerPipe pipe, EndpointLiveness liveness) {
    }

    private final RpcOptions options;
    private final ConnectionListeners listeners;
    private final ScheduledExecutorService scheduler;
    private final TransportEventLoops loops;
    private final ConcurrentHashMap<String, Remote> remotes = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ChannelPool(RpcOptions options, ConnectionListeners listeners, ScheduledExecutorService scheduler, TransportEventLoops loops) {
        this.options = options;
        this.loops = loops;
        this.listeners = listeners;
        this.scheduler = scheduler;
    }

    /** The channel to {@code endpoint}, opened if needed; null once the pool is closed. */
    Remote get(String endpoint) {
        Remote r = remotes.get(endpoint);
        if (r != null || closed) {
            return r;
        }
        r = remotes.computeIfAbsent(endpoint, this::open);
        if (closed) {
            // Lost a race with close(): make sure this channel does not outlive the pool.
            r.channel().shutdownNow();
            return null;
        }
        return r;
    }

    /** The channel to {@code endpoint} if one is open; never opens one. */
    Remote peek(String endpoint) {
        return remotes.get(endpoint);
    }

    private Remote open(String endpoint) {
        ManagedChannel channel = RaftChannels.open(endpoint, options, loops);
        // Kept even with the watch off (Raft answers then mark it for nothing): one code path.
        EndpointLiveness liveness = new EndpointLiveness(endpoint, listeners, options.livenessSilenceMs(), System.nanoTime());
        if (options.livenessWatchEnabled()) {
            listeners.watch(endpoint);
        }
        new OutboundConnectionWatcher(endpoint, channel, listeners, scheduler, options).start();
        LOG.debug("opened channel to {}", endpoint);
        return new Remote(channel, new InFlightBytes(options.maxOutboundInFlightBytesPerEndpoint()),
                new PeerPipe(endpoint, channel, scheduler, () -> closed, liveness, options.heartbeatBatchDelayMs(), options.maxMessageBytes()),
                liveness);
    }

    /** Runs {@code action} for every open channel (the liveness watch's round). */
    void forEach(Consumer<Remote> action) {
        remotes.values().forEach(action);
    }

    /** Channels open now: one per remote endpoint. */
    int size() {
        return remotes.size();
    }

    @Override
    public void close() {
        closed = true;
        List<ManagedChannel> channels = new ArrayList<>();
        remotes.values().forEach(r -> channels.add(r.channel()));
        remotes.clear();
        channels.forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel c : channels) {
            try {
                c.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
