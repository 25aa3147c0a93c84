package io.wheelraft.core;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.timer.Timer;

import java.util.function.Supplier;

/**
 * Everything a node needs: timing, initial membership, the state machine and its storage.
 * Mutable builder-style bean; {@link #validate()} checks it and names the first bad value.
 * Not thread-safe: fill it in, then hand it to one node.
 */
public final class NodeOptions {

    /** The election priority of a node that sets none: eligible to lead, no preference. */
    public static final int DEFAULT_ELECTION_PRIORITY = 1;
    /** {@link #quiesceUnservedAfterMs()} of options that set none: ask at the first settled heartbeat. */
    public static final int DEFAULT_QUIESCE_UNSERVED_AFTER_MS = 0;

    private int electionTimeoutMs = 1000;
    private int heartbeatDivisor = 10;
    private int snapshotIntervalSecs = 3600;
    private int snapshotLogMargin = 1000;
    private Configuration initialConfiguration = Configuration.empty();
    private StateMachine stateMachine;
    private LogStorage logStorage;
    private RaftMetaStorage metaStorage;
    private SnapshotStorage snapshotStorage;
    private Timer timer;
    private long randomSeed = System.nanoTime();
    private int applyQueueCapacity = 16384;
    private boolean applyInline;
    private boolean writeInline;
    private int logCacheEntries = 2048;
    private int logCacheMaxEntryBytes = 16 * 1024;
    private int maxInflightAppends = 256;
    private int maxEntriesPerAppend = 1024;
    private int maxBytesPerAppend = 4 * 1024 * 1024;
    private int connectionLostGraceMs = -1;
    private ReadOnlyOption readOnlyOption = ReadOnlyOption.READ_INDEX;
    private int leaseClockDriftMs = 50;
    private int snapshotChunkBytes = 1024 * 1024;
    private boolean witness;
    private int electionPriority = DEFAULT_ELECTION_PRIORITY;
    private int quiesceAfterMs;
    private int quiesceUnservedAfterMs = DEFAULT_QUIESCE_UNSERVED_AFTER_MS;
    private boolean fastFirstElection = true;
    private io.micrometer.core.instrument.MeterRegistry meterRegistry = io.micrometer.core.instrument.Metrics.globalRegistry;
    private boolean nodeMetrics = true;
    private boolean logRoleChanges = true;
    private CampaignSlots campaignSlots = CampaignSlots.unlimited();

    /** Checks every option, throwing an IllegalArgumentException that names the first bad one. */
    public NodeOptions validate() {
        require(electionTimeoutMs > 0, () -> "electionTimeoutMs must be > 0, was " + electionTimeoutMs);
        require(heartbeatDivisor >= 2, () -> "heartbeatDivisor must be >= 2, was " + heartbeatDivisor);
        require(electionTimeoutMs / heartbeatDivisor >= 1, () -> "electionTimeoutMs / heartbeatDivisor must be at least 1 ms, was "
                + electionTimeoutMs + " / " + heartbeatDivisor);
        require(snapshotIntervalSecs >= 0, () -> "snapshotIntervalSecs must be >= 0 (0 disables), was " + snapshotIntervalSecs);
        require(snapshotLogMargin >= 0, () -> "snapshotLogMargin must be >= 0, was " + snapshotLogMargin);
        require(initialConfiguration != null, () -> "initialConfiguration must not be null (use Configuration.empty() for a joining node)");
        require(stateMachine != null || witness, () -> "stateMachine is required (only a witness may run without one)");
        require(logStorage != null, () -> "logStorage is required");
        require(metaStorage != null, () -> "metaStorage is required");
        require(snapshotStorage != null, () -> "snapshotStorage is required");
        require(applyQueueCapacity > 0, () -> "applyQueueCapacity must be > 0, was " + applyQueueCapacity);
        require(logCacheEntries >= 0 && logCacheEntries <= (1 << 24), () -> "logCacheEntries must be in 0..2^24, was " + logCacheEntries);
        require(logCacheMaxEntryBytes >= 0, () -> "logCacheMaxEntryBytes must be >= 0, was " + logCacheMaxEntryBytes);
        require(maxInflightAppends > 0, () -> "maxInflightAppends must be > 0, was " + maxInflightAppends);
        require(maxEntriesPerAppend > 0, () -> "maxEntriesPerAppend must be > 0, was " + maxEntriesPerAppend);
        require(maxBytesPerAppend > 0, () -> "maxBytesPerAppend must be > 0, was " + maxBytesPerAppend);
        require(leaseClockDriftMs >= 0 && leaseClockDriftMs < electionTimeoutMs, () ->
                "leaseClockDriftMs must be in [0, electionTimeoutMs), was " + leaseClockDriftMs);
        require(snapshotChunkBytes > 0, () -> "snapshotChunkBytes must be > 0, was " + snapshotChunkBytes);
        require(electionPriority >= 0, () -> "electionPriority must be 0 (never leads) or more, was " + electionPriority);
        require(quiesceAfterMs >= 0, () -> "quiesceAfterMs must be >= 0 (0: never quiet), was " + quiesceAfterMs);
        require(quiesceUnservedAfterMs >= -1, () -> "quiesceUnservedAfterMs must be >= 0, or -1 for one heartbeat interval, was "
                + quiesceUnservedAfterMs);
        require(meterRegistry != null, () -> "meterRegistry must not be null (the default is Micrometer's global registry)");
        return this;
    }

    /** The message is built only on failure: every hosted group validates its options when it starts. */
    private static void require(boolean ok, Supplier<String> message) {
        if (!ok) {
            throw new IllegalArgumentException("invalid NodeOptions: " + message.get());
        }
    }

    /**
     * Runs this node as a witness: it votes and acknowledges, keeps entry headers but no payload,
     * applies nothing to a state machine, keeps metadata-only snapshots, serves no reads and never
     * leads. Its {@link #stateMachine()} is optional (without one the node uses an internal one
     * that applies nothing); when given, it hears only of configurations, errors and shutdown.
     * The configuration must mark this node as a witness (or not list it yet), else it stops.
     * Default false.
     */
    public boolean witness() { return witness; }
    public NodeOptions witness(boolean v) { witness = v; return this; }

    /**
     * This node's election priority while the configuration sets none for it: 0 never leads,
     * higher is preferred among caught-up members. The node tells the leader in its AppendEntries
     * answers; the leader ranks failover by it and hands leadership over to a caught-up member
     * of higher priority (see docs/architecture.md, Election priorities). Default
     * {@link #DEFAULT_ELECTION_PRIORITY}.
     */
    public int electionPriority() { return electionPriority; }
    public NodeOptions electionPriority(int v) { electionPriority = v; return this; }

    public int electionTimeoutMs() { return electionTimeoutMs; }
    public NodeOptions electionTimeoutMs(int v) { electionTimeoutMs = v; return this; }

    /** Heartbeats go out every {@code electionTimeoutMs / heartbeatDivisor}. Default 10. */
    public int heartbeatDivisor() { return heartbeatDivisor; }
    public NodeOptions heartbeatDivisor(int v) { heartbeatDivisor = v; return this; }

    public int heartbeatIntervalMs() { return Math.max(1, electionTimeoutMs / heartbeatDivisor); }

    /** 0 disables periodic snapshots. */
    public int snapshotIntervalSecs() { return snapshotIntervalSecs; }
    public NodeOptions snapshotIntervalSecs(int v) { snapshotIntervalSecs = v; return this; }

    /** Entries kept behind a snapshot for slow followers. */
    public int snapshotLogMargin() { return snapshotLogMargin; }
    public NodeOptions snapshotLogMargin(int v) { snapshotLogMargin = v; return this; }

    /** Membership used only when the log and snapshot hold none (first start). Empty: join later. */
    public Configuration initialConfiguration() { return initialConfiguration; }
    public NodeOptions initialConfiguration(Configuration v) { initialConfiguration = v; return this; }

    public StateMachine stateMachine() { return stateMachine; }
    public NodeOptions stateMachine(StateMachine v) { stateMachine = v; return this; }

    public LogStorage logStorage() { return logStorage; }
    public NodeOptions logStorage(LogStorage v) { logStorage = v; return this; }

    public RaftMetaStorage metaStorage() { return metaStorage; }
    public NodeOptions metaStorage(RaftMetaStorage v) { metaStorage = v; return this; }

    public SnapshotStorage snapshotStorage() { return snapshotStorage; }
    public NodeOptions snapshotStorage(SnapshotStorage v) { snapshotStorage = v; return this; }

    /**
     * The timing wheel the node schedules on; null means its runtime's ({@code NodeRuntime.timer()}).
     * If set it must be that same wheel: the node reads time from its runtime's clock, and a
     * wheel running on another clock would fire its timeouts out of step with it (the node
     * refuses to be built with another wheel).
     */
    public Timer timer() { return timer; }
    public NodeOptions timer(Timer v) { timer = v; return this; }

    /** Seeds the randomised election timeouts (fixed in simulation so runs replay). */
    public long randomSeed() { return randomSeed; }
    public NodeOptions randomSeed(long v) { randomSeed = v; return this; }

    /** Tasks {@code apply} may queue ahead of the node before it answers BUSY. */
    public int applyQueueCapacity() { return applyQueueCapacity; }
    public NodeOptions applyQueueCapacity(int v) { applyQueueCapacity = v; return this; }

    /**
     * Whether newly committed entries are applied on the thread that advanced the commit index
     * (a transport I/O thread or a disk thread, running the node's Raft work) when the apply lane
     * is idle, instead of being handed to an apply pool thread. Default false.
     *
     * <p>Turn it on only for a state machine whose {@code onApply} is short and never blocks (an
     * in-memory counter or map): it saves one thread hand-off per commit, measured at about 0.1 ms
     * of the 1-in-flight latency of the counter example (docs/benchmarks.md). The price is that
     * this node's Raft work waits while the state machine runs: {@code onApply}, and any other
     * state machine call (such as {@code onSnapshotSave}) queued on the apply lane while the
     * inline run is under way, which it runs too. A slow one delays this node's heartbeats, votes
     * and replication, and can cost it leadership. Order is unchanged: entries are still applied
     * one batch at a time, in log order, after anything already queued on the apply lane; while
     * that lane is busy, commits are queued to it as usual.
     */
    public boolean applyInline() { return applyInline; }
    public NodeOptions applyInline(boolean v) { applyInline = v; return this; }

    /**
     * Whether a follower writes sparse log appends on the thread that delivered them (a transport
     * I/O thread, when the Raft lane was idle) instead of handing them to a disk thread. Default
     * false.
     *
     * <p>Sparse: the previous append came more than twice the last write's duration earlier, so
     * there is nothing to group-commit with. This saves the disk-thread wake-up and the I/O
     * thread wake-up for the answer (measured in docs/benchmarks.md). The price is that the
     * delivering thread waits for the fsync: other connections it serves wait with it, so a disk
     * that stalls for seconds stalls them too (with the hand-off only this node's acknowledgements
     * would wait). Writes that come close together keep the hand-off and its group commit.
     */
    public boolean writeInline() { return writeInline; }
    public NodeOptions writeInline(boolean v) { writeInline = v; return this; }

    /**
     * Recently persisted log entries kept in memory (0: none), so replication's term checks and
     * the state machine read them without a storage lookup. Memory is at most about this many
     * times {@link #logCacheMaxEntryBytes()}, allocated when the node first writes.
     */
    public int logCacheEntries() { return logCacheEntries; }
    public NodeOptions logCacheEntries(int v) { logCacheEntries = v; return this; }

    /** Entries with more data than this are not kept in the log cache. */
    public int logCacheMaxEntryBytes() { return logCacheMaxEntryBytes; }
    public NodeOptions logCacheMaxEntryBytes(int v) { logCacheMaxEntryBytes = v; return this; }

    public int maxInflightAppends() { return maxInflightAppends; }
    public NodeOptions maxInflightAppends(int v) { maxInflightAppends = v; return this; }

    public int maxEntriesPerAppend() { return maxEntriesPerAppend; }
    public NodeOptions maxEntriesPerAppend(int v) { maxEntriesPerAppend = v; return this; }

    public int maxBytesPerAppend() { return maxBytesPerAppend; }
    public NodeOptions maxBytesPerAppend(int v) { maxBytesPerAppend = v; return this; }

    /**
     * Sets how long a voter that saw its connection to the leader break keeps refusing candidates:
     * half of this (plus 2% of the election timeout) after the last heartbeat it received. Half of
     * it also bounds the leader's lease ({@code min(T, grace/2) - leaseClockDriftMs}). The first
     * survivor itself starts its pre-vote as soon as it sees the break (see docs/divergence.md).
     * Default (-1): two heartbeat intervals.
     */
    /**
     * Lets the group go quiet once its leader has been settled (everything committed and held by
     * every reachable member, nothing pending) for this long: no timer, no heartbeat of its own
     * until a proposal, read, vote, transfer, membership change or a lost or returning peer process
     * wakes it. For processes hosting many mostly idle groups. Needs a transport that reports
     * silent peers ({@link io.wheelraft.core.spi.RaftTransport#reportsSilentPeers()}, the gRPC
     * transport by default): a node on any other refuses to start. Default 0: never quiet.
     */
    /**
     * Whether a group that has never had a leader elects its first one at once instead of after
     * an election timeout. When every member starts with term 0 and an empty log, one voter
     * chosen from a hash of the group id (so the leaders of many groups spread evenly over the
     * processes) campaigns one heartbeat interval after its start, without a pre-vote round, and
     * voters that have never followed a leader grant it without waiting out their own timeout;
     * the other voters keep their randomised election timeout, so a group whose chosen voter is
     * down or cut off is still led. Only when elections start changes, never who may win: with
     * thousands of fresh groups per process this avoids thousands of rounds starting in the same
     * second, splitting their votes and running again. Default true; false: every member waits
     * out its election timeout and pre-votes first, as in a group that had a leader.
     */
    public boolean fastFirstElection() { return fastFirstElection; }
    public NodeOptions fastFirstElection(boolean v) { fastFirstElection = v; return this; }

    /**
     * How long a settled leader waits before its group goes quiet (see docs/divergence.md, "Quiet
     * groups"); 0, the default, never: only for a transport that reports silent peers.
     */
    public int quiesceAfterMs() { return quiesceAfterMs; }
    public NodeOptions quiesceAfterMs(int v) { quiesceAfterMs = v; return this; }

    /**
     * The same wait for a leadership that has served nothing (no proposal, read, transfer or
     * membership change) since it was won or last went quiet: a start-up or failover election,
     * a member caught up after its process came back. Never longer than {@link #quiesceAfterMs()}.
     * Default 0: its first heartbeat after it settled asks the followers to go quiet; -1: one
     * heartbeat interval. Such a leadership predicts no traffic, so the heartbeat rounds of the
     * full wait would be work for nothing, and a process starting 100,000 groups paces the start
     * on how many are awake (every group led after 91-105 s with 0, against 110-121 s with one
     * interval; docs/benchmarks.md, "Many groups"). The full wait keeps a group that is being
     * written from going quiet between two writes.
     */
    public int quiesceUnservedAfterMs() {
        int v = quiesceUnservedAfterMs < 0 ? heartbeatIntervalMs() : quiesceUnservedAfterMs;
        return Math.min(v, quiesceAfterMs);
    }
    public NodeOptions quiesceUnservedAfterMs(int v) { quiesceUnservedAfterMs = v; return this; }

    public int connectionLostGraceMs() { return connectionLostGraceMs < 0 ? 2 * heartbeatIntervalMs() : connectionLostGraceMs; }
    public NodeOptions connectionLostGraceMs(int v) { connectionLostGraceMs = v; return this; }

    public ReadOnlyOption readOnlyOption() { return readOnlyOption; }
    public NodeOptions readOnlyOption(ReadOnlyOption v) { readOnlyOption = v; return this; }

    public int leaseClockDriftMs() { return leaseClockDriftMs; }
    public NodeOptions leaseClockDriftMs(int v) { leaseClockDriftMs = v; return this; }

    public int snapshotChunkBytes() { return snapshotChunkBytes; }
    public NodeOptions snapshotChunkBytes(int v) { snapshotChunkBytes = v; return this; }

    /**
     * Where the node's metrics go (see the Metrics section of docs/architecture.md). Default: Micrometer's
     * global registry, which records nothing until the service adds a registry to it.
     */
    public io.micrometer.core.instrument.MeterRegistry meterRegistry() { return meterRegistry; }
    public NodeOptions meterRegistry(io.micrometer.core.instrument.MeterRegistry v) { meterRegistry = v; return this; }

    /**
     * Whether the node registers its own meters (default true). False registers none and records
     * no latencies, about 2 KB of heap less per node: for a process hosting thousands of groups,
     * which watches them through process-wide figures instead.
     */
    public boolean nodeMetrics() { return nodeMetrics; }
    public NodeOptions nodeMetrics(boolean v) { nodeMetrics = v; return this; }

    /**
     * Whether the node logs its start and each change to follower, candidate or leader on a line
     * of its own at INFO (default true). False, for a process hosting thousands of groups: those
     * lines go to DEBUG, and one INFO line every 10 s counts them for all such nodes of the process.
     * Errors, repairs and shutdowns are logged one by one either way.
     */
    public boolean logRoleChanges() { return logRoleChanges; }
    public NodeOptions logRoleChanges(boolean v) { logRoleChanges = v; return this; }

    /**
     * How many groups of this process may campaign at once (default: no bound). Give every group
     * of a process the same {@link CampaignSlots}: when a process hosting thousands of groups
     * dies, their followers elsewhere then fail over in waves instead of all at once (see
     * {@link CampaignSlots}). A process hosting one group needs none.
     */
    public CampaignSlots campaignSlots() { return campaignSlots; }
    public NodeOptions campaignSlots(CampaignSlots v) { campaignSlots = java.util.Objects.requireNonNull(v, "campaignSlots"); return this; }
}
