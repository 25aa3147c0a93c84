package io.wheelraft.rpc;

/**
 * Limits and timings of the gRPC transport, shared by its server and its channels. Immutable;
 * build with {@link #builder()}. Every setter rejects a value out of range with a message naming it.
 *
 * <p>Without {@link Builder#tls(TlsConfig) TLS} the port carries Raft traffic, client commands
 * and admin operations in plain text and unauthenticated: it must not be reachable from outside
 * the cluster's own network.
 */
public final class RpcOptions {

    private final int maxMessageBytes;
    private final long maxInboundInFlightBytes;
    private final long maxOutboundInFlightBytesPerEndpoint;
    private final long reconnectBackoffMinMs;
    private final long reconnectBackoffMaxMs;
    private final long keepAliveTimeMs;
    private final long keepAliveTimeoutMs;
    private final int serverWorkerThreads;
    private final int ioThreads;
    private final TlsConfig tls;
    private final boolean livenessWatchEnabled;
    private final long livenessIntervalMs;
    private final long livenessSilenceMs;
    private final long heartbeatBatchDelayMs;

    private RpcOptions(Builder b) {
        this.maxMessageBytes = b.maxMessageBytes;
        this.maxInboundInFlightBytes = b.maxInboundInFlightBytes;
        this.maxOutboundInFlightBytesPerEndpoint = b.maxOutboundInFlightBytesPerEndpoint;
        this.reconnectBackoffMinMs = b.reconnectBackoffMinMs;
        this.reconnectBackoffMaxMs = b.reconnectBackoffMaxMs;
        this.keepAliveTimeMs = b.keepAliveTimeMs;
        this.keepAliveTimeoutMs = b.keepAliveTimeoutMs;
        this.serverWorkerThreads = b.serverWorkerThreads;
        this.ioThreads = b.ioThreads;
        this.tls = b.tls;
        this.livenessWatchEnabled = b.livenessWatchEnabled;
        this.livenessIntervalMs = b.livenessIntervalMs;
        this.livenessSilenceMs = b.livenessSilenceMs;
        this.heartbeatBatchDelayMs = b.heartbeatBatchDelayMs;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static RpcOptions defaults() {
        return builder().build();
    }

    /** Largest message accepted or sent, in bytes; larger ones get RESOURCE_EXHAUSTED. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** Bytes of requests handed to this process's nodes and not yet answered; beyond it RESOURCE_EXHAUSTED. */
    public long maxInboundInFlightBytes() {
        return maxInboundInFlightBytes;
    }

    /** Bytes of requests sent to one endpoint and not yet answered; beyond it calls fail at once (REJECTED). */
    public long maxOutboundInFlightBytesPerEndpoint() {
        return maxOutboundInFlightBytesPerEndpoint;
    }

    /** First delay before reconnecting to an endpoint that failed; doubles per failure. */
    public long reconnectBackoffMinMs() {
        return reconnectBackoffMinMs;
    }

    /** Longest delay between reconnect attempts. */
    public long reconnectBackoffMaxMs() {
        return reconnectBackoffMaxMs;
    }

    /** HTTP/2 ping interval on idle connections: finds peers whose host (not just process) vanished. */
    public long keepAliveTimeMs() {
        return keepAliveTimeMs;
    }

    public long keepAliveTimeoutMs() {
        return keepAliveTimeoutMs;
    }

    /** Threads serving application services (admin, counter); Raft traffic runs on the I/O threads. */
    public int serverWorkerThreads() {
        return serverWorkerThreads;
    }

    /**
     * Netty event-loop threads of the transport's own, shared by its server and its channels to
     * peers; 0 (the default) uses a process-wide group shared by every transport that asks for it
     * (Netty's default size, twice the cores). Fewer
     * loops mean fewer wake-ups between them: with one, a leader's AppendEntries and its reply to
     * the client leave from the loop that received the work. On the 2-core benchmark machine one
     * loop made no difference beyond noise for the counter (docs/benchmarks.md, step 8b). All
     * network work of the process then shares that many threads: a busy server with many cores
     * wants more, and with {@code NodeOptions.writeInline} a follower's fsync runs on one of them,
     * so with a single loop every connection of the process waits for the disk.
     */
    public int ioThreads() {
        return ioThreads;
    }

    /** TLS settings, or null for plain text. */
    public TlsConfig tls() {
        return tls;
    }

    /**
     * Whether the transport watches every remote endpoint it has a channel to with one ping per
     * {@link #livenessIntervalMs()} (per process pair, whatever the number of groups) and reports
     * one silent for {@link #livenessSilenceMs()} as lost, and one that answers again or restarted
     * as restored. On by default; groups may go quiet (no heartbeats of their own) only with it on.
     */
    public boolean livenessWatchEnabled() {
        return livenessWatchEnabled;
    }

    /** Time between two liveness pings to the same endpoint. */
    public long livenessIntervalMs() {
        return livenessIntervalMs;
    }

    /**
     * How long an endpoint may give no sign of life (no ping answered, no Raft call answered) before
     * it is reported lost. Longer than {@link #livenessIntervalMs()}; a peer's pauses (GC, a loaded
     * machine) must fit in it, or it is reported lost and then restored, which costs its groups an
     * early pre-vote but nothing else.
     */
    public long livenessSilenceMs() {
        return livenessSilenceMs;
    }

    /**
     * How long a leader's timer heartbeat, and a follower's answer to one, may wait for other
     * groups' messages to the same process before leaving: what lets one message per process pair
     * carry the heartbeats of many groups (each group's timer fires at its own moment). Only
     * those wait; entries, votes, read-confirming rounds and their answers leave at once, taking
     * along whatever is queued. 0: nothing waits. Keep it a small fraction of the heartbeat
     * interval (default 5 ms against the counter's 100 ms).
     */
    public long heartbeatBatchDelayMs() {
        return heartbeatBatchDelayMs;
    }

    /** Collects options; not thread-safe. */
    public static final class Builder {
        private int maxMessageBytes = 16 * 1024 * 1024;
        private long maxInboundInFlightBytes = 256L * 1024 * 1024;
        private long maxOutboundInFlightBytesPerEndpoint = 64L * 1024 * 1024;
        private long reconnectBackoffMinMs = 50;
        private long reconnectBackoffMaxMs = 1000;
        private long keepAliveTimeMs = 10_000;
        private long keepAliveTimeoutMs = 5_000;
        private int serverWorkerThreads = 4;
        private int ioThreads;
        private long heartbeatBatchDelayMs = 5;
        private TlsConfig tls;
        private boolean livenessWatchEnabled = true;
        private long livenessIntervalMs = 100;
        private long livenessSilenceMs = 500;

        private Builder() {
        }

        public Builder maxMessageBytes(int bytes) {
            this.maxMessageBytes = (int) positive("maxMessageBytes", bytes);
            return this;
        }

        public Builder maxInboundInFlightBytes(long bytes) {
            this.maxInboundInFlightBytes = positive("maxInboundInFlightBytes", bytes);
            return this;
        }

        public Builder maxOutboundInFlightBytesPerEndpoint(long bytes) {
            this.maxOutboundInFlightBytesPerEndpoint = positive("maxOutboundInFlightBytesPerEndpoint", bytes);
            return this;
        }

        public Builder reconnectBackoff(long minMs, long maxMs) {
            positive("reconnect backoff minimum (ms)", minMs);
            positive("reconnect backoff maximum (ms)", maxMs);
            if (maxMs < minMs) {
                throw new IllegalArgumentException("reconnect backoff maximum " + maxMs + " ms is below its minimum " + minMs + " ms");
            }
            this.reconnectBackoffMinMs = minMs;
            this.reconnectBackoffMaxMs = maxMs;
            return this;
        }

        public Builder keepAlive(long timeMs, long timeoutMs) {
            this.keepAliveTimeMs = positive("keepAliveTimeMs", timeMs);
            this.keepAliveTimeoutMs = positive("keepAliveTimeoutMs", timeoutMs);
            return this;
        }

        public Builder serverWorkerThreads(int threads) {
            this.serverWorkerThreads = (int) positive("serverWorkerThreads", threads);
            return this;
        }

        /** See {@link RpcOptions#ioThreads()}; 0 for the process-wide shared group. */
        public Builder ioThreads(int threads) {
            if (threads < 0) {
                throw new IllegalArgumentException("ioThreads must be 0 (the process-wide shared event loops) or more, was " + threads);
            }
            this.ioThreads = threads;
            return this;
        }

        /** Turns on TLS (mutual, if the config says so); null means plain text. */
        public Builder tls(TlsConfig tls) {
            this.tls = tls;
            return this;
        }

        /** See {@link RpcOptions#livenessWatchEnabled()}; on by default. */
        public Builder livenessWatch(boolean enabled) {
            this.livenessWatchEnabled = enabled;
            return this;
        }

        /**
         * A liveness ping to each watched endpoint every {@code intervalMs}; an endpoint silent for
         * {@code silenceMs} is reported lost. Default 100 ms and 500 ms.
         */
        public Builder liveness(long intervalMs, long silenceMs) {
            positive("livenessIntervalMs", intervalMs);
            positive("livenessSilenceMs", silenceMs);
            if (silenceMs <= intervalMs) {
                throw new IllegalArgumentException("livenessSilenceMs (" + silenceMs + " ms) must be longer than livenessIntervalMs ("
                        + intervalMs + " ms): a peer needs more than one ping interval to answer");
            }
            this.livenessIntervalMs = intervalMs;
            this.livenessSilenceMs = silenceMs;
            return this;
        }

        /** See {@link RpcOptions#heartbeatBatchDelayMs()}; default 5 ms, 0 sends every heartbeat at once. */
        public Builder heartbeatBatchDelay(long delayMs) {
            if (delayMs < 0 || delayMs > 1000) {
                throw new IllegalArgumentException("heartbeatBatchDelayMs must be within 0..1000, got " + delayMs);
            }
            this.heartbeatBatchDelayMs = delayMs;
            return this;
        }

        public RpcOptions build() {
            return new RpcOptions(this);
        }

        private static long positive(String name, long value) {
            if (value <= 0) {
                throw new IllegalArgumentException(name + " must be positive, got " + value);
            }
            return value;
        }
    }
}
