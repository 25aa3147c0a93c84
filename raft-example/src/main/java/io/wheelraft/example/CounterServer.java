package io.wheelraft.example;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.rpc.GrpcRaftTransport;
import io.wheelraft.rpc.RpcOptions;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbStore;
import io.wheelraft.storage.RocksDbStoreOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One counter node: RocksDB log, file meta and local snapshots under the data directory, the gRPC
 * transport on the node's port serving Raft, admin and the counter service, and a watcher that
 * logs every role change with its time. A node whose peer list does not contain itself starts
 * with an empty configuration and waits to be added ({@code admin add-peer}, or
 * {@code admin add-witness} for a witness). A witness runs without the counter: no state
 * machine of its own, no data in its snapshots, and it serves clients nothing.
 *
 * <p>Thread-safe; {@link #close()} stops everything it started, in reverse order.
 */
public final class CounterServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CounterServer.class);

    /**
     * What a node needs; validated by {@link #start}.
     *
     * @param witnesses        the witnesses among {@code peers} (and {@code self} when it joins later as one)
     * @param electionPriority this node's election priority, or null for the default
     */
    public record Settings(Path dataDir, PeerId self, List<PeerId> peers, int electionTimeoutMs, int snapshotIntervalSecs,
                           List<PeerId> witnesses, Integer electionPriority) {
        public Settings {
            Objects.requireNonNull(dataDir, "dataDir");
            Objects.requireNonNull(self, "self");
            peers = List.copyOf(peers);
            witnesses = List.copyOf(witnesses);
        }

        public Settings(Path dataDir, PeerId self, List<PeerId> peers, int electionTimeoutMs, int snapshotIntervalSecs) {
            this(dataDir, self, peers, electionTimeoutMs, snapshotIntervalSecs, List.of(), null);
        }

        /** True when the node is one of the initial members (else it joins later). */
        public boolean member() {
            return peers.contains(self);
        }

        /** True when this node runs as a witness. */
        public boolean witness() {
            return witnesses.contains(self);
        }

        /** The initial configuration: the peers with the witnesses marked, or empty for a node that joins later. */
        Configuration initialConfiguration() {
            if (!member()) {
                return Configuration.empty();
            }
            return new Configuration(peers, List.of(), witnesses.stream().filter(peers::contains).toList(), java.util.Map.of());
        }
    }

    /**
     * A witness's log holds entry headers without payload, a small fraction of a data node's
     * bytes per entry, so its write-ahead log is pre-sized, buffered and capped at a sixteenth of
     * the defaults (64, 64 and 96 MiB): its appends still overwrite a pre-sized file (no inode
     * write per fsync, which matters because its acknowledgement completes a quorum whenever a
     * data node is down), without reserving a data node's disk space.
     */
    private static final RocksDbStoreOptions WITNESS_STORE = RocksDbStoreOptions.defaults()
            .withPresizedWalBytes(4L << 20).withWriteBufferBytes(4L << 20).withMaxTotalWalBytes(6L << 20);

    private final Settings settings;
    /** The counter; null on a witness, which holds no data. */
    private final CounterStateMachine stateMachine;
    private final ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "counter-role-watcher");
        t.setDaemon(true);
        return t;
    });
    private RocksDbStore store;
    private FileMetaStorage meta;
    private LocalSnapshotStorage snapshots;
    private GrpcRaftTransport transport;
    private RaftGroupService group;
    private Node node;

    private CounterServer(Settings settings) {
        this.settings = settings;
        this.stateMachine = settings.witness() ? null : new CounterStateMachine();
    }

    /**
     * Opens the storage, binds the port and starts the node.
     *
     * @throws CliException (exit 1) naming the data directory that is not usable or the port that is taken
     */
    public static CounterServer start(Settings settings, MeterRegistry registry) {
        CounterServer server = new CounterServer(settings);
        try {
            server.doStart(registry);
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private void doStart(MeterRegistry registry) {
        Path data = prepareDataDir(settings.dataDir());
        // The meta first: a node whose meta is damaged must refuse before anything else is touched.
        meta = openMeta(data);
        try {
            store = settings.witness() ? RocksDbStore.open(data.resolve("log"), WITNESS_STORE) : RocksDbStore.open(data.resolve("log"));
            snapshots = LocalSnapshotStorage.open(data.resolve(CounterServiceImpl.GROUP_ID).resolve("snapshot"));
        } catch (RuntimeException e) {
            throw new CliException(CliException.FAILED, "cannot open the data directory " + data + ": " + e.getMessage(), e);
        }
        CounterServiceImpl service = settings.witness() ? CounterServiceImpl.witness(registry) : new CounterServiceImpl(stateMachine, registry);
        transport = bind(settings.self(), service);
        NodeOptions options = new NodeOptions()
                .electionTimeoutMs(settings.electionTimeoutMs())
                .snapshotIntervalSecs(settings.snapshotIntervalSecs())
                .initialConfiguration(settings.initialConfiguration())
                .witness(settings.witness())
                // A witness has no counter and needs no state machine: the core applies no data on it.
                .stateMachine(settings.witness() ? null : service.stateMachine())
                // The counter's onApply is a few map operations in memory and never blocks, so it
                // runs on the thread that commits instead of costing a hand-off per commit.
                .applyInline(true)
                // A follower syncs a lone append on the thread that received it instead of waking
                // a disk thread; appends that come close together keep the hand-off and group commit.
                .writeInline(true)
                .logStorage(store.logStorage(CounterServiceImpl.GROUP_ID))
                .metaStorage(meta)
                .snapshotStorage(snapshots)
                .meterRegistry(registry);
        if (settings.electionPriority() != null) {
            options.electionPriority(settings.electionPriority());
        }
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        group = new RaftGroupService(CounterServiceImpl.GROUP_ID, settings.self(), options, transport);
        try {
            node = group.start();
        } catch (RuntimeException e) {
            // The node refuses to start on state it cannot trust (e.g. a log without the meta that
            // holds its term and vote); its message says what and what to do.
            throw new CliException(CliException.FAILED, "counter node " + settings.self() + " cannot start on " + data + ": "
                    + oneLine(e), e);
        }
        if (node.status().role() == Role.ERROR) {
            // The node refused its stored state at start (e.g. the meta that holds its term and
            // vote is missing next to a log): it would serve nothing, so the server exits.
            Status why = stateMachine == null ? null : stateMachine.lastError();
            throw new CliException(CliException.FAILED, "counter node " + settings.self() + " cannot start on " + data + ": "
                    + (why == null ? "its node stopped at start (role error); see the log above" : why.message()));
        }
        if (stateMachine != null) {
            stateMachine.roleSource(() -> node.status().role());
        }
        transport.nodes().register(node);
        service.attach(node);
        registerGauges(registry);
        RoleWatch roles = new RoleWatch(node, watcher, LOG::info);
        roles.start();
        watcher.scheduleWithFixedDelay(roles::poll, RoleWatch.FALLBACK_POLL_MS, RoleWatch.FALLBACK_POLL_MS, TimeUnit.MILLISECONDS);
        LOG.info("counter node {} serving on {} (data {}, {}{}, election timeout {} ms)", settings.self(), transport.endpoint(), data,
                settings.member() ? "members " + settings.initialConfiguration() : "not a member yet: waiting to be added",
                settings.witness() ? "; a witness: no counter, never leads" : "", settings.electionTimeoutMs());
    }

    /**
     * Opens the raft meta (term, vote, repairing flag). A damaged meta cannot be repaired in place:
     * the vote it held is forgotten, and a node that forgets its vote may vote twice in one term.
     */
    private static FileMetaStorage openMeta(Path data) {
        return openMeta(data, CounterServiceImpl.GROUP_ID);
    }

    /** The meta of {@code groupId} under {@code data}: see {@link #openMeta(Path)}. */
    static FileMetaStorage openMeta(Path data, String groupId) {
        Path dir = data.resolve(groupId).resolve("meta");
        try {
            return FileMetaStorage.open(dir);
        } catch (LogCorruptionException e) {
            throw new CliException(CliException.FAILED, "the raft meta in " + dir + " is damaged (" + oneLine(e)
                    + "); it cannot be repaired in place because this node's term and vote would be forgotten and it could"
                    + " vote twice in one term; remove this peer (admin remove-peer), wipe " + data
                    + ", then add it back (admin add-peer): see docs/storage.md", e);
        } catch (RuntimeException e) {
            throw new CliException(CliException.FAILED, "cannot read the raft meta in " + dir + ": " + oneLine(e), e);
        }
    }

    static String oneLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** Creates the data directory if needed and proves it is writable. */
    static Path prepareDataDir(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(abs);
        } catch (IOException | SecurityException e) {
            throw CliException.failed("data directory " + abs + " cannot be created: " + describe(e));
        }
        if (!Files.isDirectory(abs)) {
            throw CliException.failed("data directory " + abs + " is not a directory");
        }
        try {
            Path probe = Files.createTempFile(abs, ".write-probe", ".tmp");
            Files.delete(probe);
        } catch (IOException | SecurityException e) {
            throw CliException.failed("data directory " + abs + " is not writable: " + describe(e));
        }
        return abs;
    }

    private static String describe(Exception e) {
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage());
    }

    static GrpcRaftTransport bind(PeerId self, io.grpc.BindableService service) {
        return bind(self, service, RpcOptions.builder());
    }

    /** As {@link #bind(PeerId, io.grpc.BindableService)}, with the caller's transport options as a start. */
    static GrpcRaftTransport bind(PeerId self, io.grpc.BindableService service, RpcOptions.Builder options) {
        try {
            // A restarted peer should hear from us within a fraction of a second, not after a 1 s backoff.
            RpcOptions rpc = options.reconnectBackoff(20, 200).build();
            return GrpcRaftTransport.builder().listen(self.host(), self.port()).options(rpc).addNonBlockingService(service).start();
        } catch (RuntimeException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof BindException) {
                    throw new CliException(CliException.FAILED, "cannot listen on " + self.endpoint() + ": "
                            + (t.getMessage() != null && t.getMessage().contains("in use") ? "port " + self.port() + " is already in use" : t.getMessage()), e);
                }
            }
            throw new CliException(CliException.FAILED, "cannot listen on " + self.endpoint() + ": " + rootMessage(e), e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    private void registerGauges(MeterRegistry registry) {
        // The node's own wheelraft.* meters (term, indexes, latencies, replication lag) come from
        // raft-core through NodeOptions.meterRegistry; these are the counter's.
        if (stateMachine != null) {
            Gauge.builder("counter.value", stateMachine, CounterStateMachine::value).register(registry);
        }
    }

    public Node node() {
        return node;
    }

    /** The counter, or null on a witness. */
    public CounterStateMachine stateMachine() {
        return stateMachine;
    }

    public NodeStatus status() {
        return node.status();
    }

    /** {@code host:port} the server listens on. */
    public String endpoint() {
        return transport.endpoint();
    }

    @Override
    public synchronized void close() {
        watcher.shutdownNow();
        if (group != null) {
            try {
                if (node != null && transport != null) {
                    transport.nodes().unregister(node);
                }
                group.shutdown(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            group = null;
        }
        if (transport != null) {
            transport.close();
            transport = null;
        }
        if (snapshots != null) {
            snapshots.close();
            snapshots = null;
        }
        if (meta != null) {
            meta.close();
            meta = null;
        }
        if (store != null) {
            store.close();
            store = null;
        }
    }
}
