package io.wheelraft.example;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.wheelraft.client.ExactlyOnceStateMachine;
import io.wheelraft.client.RaftClientService;
import io.wheelraft.core.CampaignSlots;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.PreferredLeader;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.RaftRuntime;
import io.wheelraft.core.Role;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.rpc.GrpcRaftTransport;
import io.wheelraft.rpc.RpcOptions;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbLogStorage;
import io.wheelraft.storage.RocksDbMetaStorage;
import io.wheelraft.storage.RocksDbStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Many counters in one process ({@code server --groups N}): one replica of each counter group,
 * all on one engine. The groups share one {@link RaftRuntime} (the process's timing wheel, {@value #RAFT_THREADS} Raft lanes,
 * {@value #DISK_THREADS} disk lanes),
 * one {@link RocksDbStore} ({@code DATA/log}, each group's log under its own key range), one gRPC
 * transport (one server port, one channel per peer process) and one {@link RaftClientService}.
 * Each group's term and vote are a key in that store ({@link RocksDbMetaStorage}), not a file;
 * its snapshots go to {@code DATA/<group>/snapshot}, created with its first snapshot. Hosting a
 * group therefore creates no file or directory and costs no fsync. A group whose term and vote
 * are still in a {@code DATA/<group>/meta} file (an earlier layout) has them moved into the store
 * when it is added.
 *
 * <p>Groups are added and removed at run time ({@link #addGroup}, {@link #removeGroup}): a group
 * added on every member elects a leader and serves clients while the others go on untouched; a
 * removed group stops, releases its log and files, and answers nothing more. The nodes' per-group
 * meters are not exported (thousands of groups would make every scrape tens of megabytes); the
 * process registry gets {@code counter.groups.hosted} and {@code counter.groups.leading}.
 *
 * <p>Thread-safe: adding, removing and closing are serialised; lookups may run from any thread.
 */
public final class CounterGroups implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CounterGroups.class);
    private static final long SHUTDOWN_WAIT_MS = 10_000;
    private static final int LOG_CACHE_ENTRIES = 64;
    /** The election priority of a group's preferred process ({@link PreferredLeader}); the others keep the default. */
    static final int PREFERRED_PRIORITY = 2;
    /**
     * Raft lanes of the engine. They never block on the disk (the store's GroupCommitQueue
     * syncs many groups' appends and term and vote writes together while each node waits); 4 lanes measured
     * the same as 16 in 1,000-group start-up and kill runs, within their run-to-run spread, so
     * this stays at the value those runs were tuned with. A constant, whatever the number of groups.
     */
    private static final int RAFT_THREADS = 16;
    /**
     * Disk lanes of the engine: log truncations, resets and snapshot chunks. Appends do not use
     * them: the store's {@code GroupCommitQueue} makes every group's queued appends durable in one
     * synced write. (When appends ran here, one synced write per group at a time, 16 lanes let
     * RocksDB merge up to 16 groups per fsync; the count stays at what the start-up and kill runs
     * were measured with.) A constant, whatever the number of groups.
     */
    private static final int DISK_THREADS = 16;
    /**
     * Groups of this process that may campaign at once ({@link CampaignSlots}). Without a bound a
     * process killed while leading 3,501 of 10,000 groups left the two survivors running thousands
     * of rounds together, each answered after its deadline, and no group led again within 30 s.
     */
    static final int CAMPAIGN_LIMIT = 100;
    /** Overrides {@link #CAMPAIGN_LIMIT} for a measurement (a positive number). */
    static final String CAMPAIGN_LIMIT_PROPERTY = "wheelraft.campaignLimit";
    /** Overrides how long a settled group waits before going quiet (default: the election timeout), for a measurement. */
    static final String QUIESCE_AFTER_PROPERTY = "wheelraft.quiesceAfterMs";
    /**
     * Overrides how long a settled leadership that has served nothing waits before going quiet
     * (default: {@link NodeOptions#quiesceUnservedAfterMs()}), for a measurement.
     */
    static final String QUIESCE_UNSERVED_AFTER_PROPERTY = "wheelraft.quiesceUnservedAfterMs";
    /** Started groups that may be awake (not quiet yet) while more are started; see {@link StartPacing}. */
    static final int START_AWAKE_LIMIT = 500;
    /** Overrides {@link #START_AWAKE_LIMIT} for a measurement (a positive number). */
    static final String START_AWAKE_LIMIT_PROPERTY = "wheelraft.startAwakeLimit";
    /**
     * A peer process counts as silent (a partition, a hung host) after this many election timeouts
     * without a sign of life, not the transport's default half second. A killed process is seen at
     * once anyway (its connections reset), so silence only decides how soon the quiet groups led
     * by a cut-off process notice. A false report costs far more: it wakes every quiet group whose
     * leader is there, and a process hosting thousands of groups misses its window while alive
     * (a collection, a burst of elections on a saturated machine). With one election timeout, each
     * process of a 10,000-group start reported its peers silent 4-5 times, each report set off
     * thousands of rounds, and those loaded the machine into the next report: 68-80 s and 126-146 s
     * of server CPU until every group was led, against 50-54 s and 91-99 s with three timeouts
     * (no report), on tmpfs (docs/benchmarks.md, "Many groups").
     */
    static final int LIVENESS_SILENCE_TIMEOUTS = 3;
    /** Overrides the silence allowed a peer process ({@link #LIVENESS_SILENCE_TIMEOUTS}), in ms, for a measurement. */
    static final String LIVENESS_SILENCE_PROPERTY = "wheelraft.livenessSilenceMs";
    /** A start-up wave that sees no group go quiet for this many election timeouts ends the pacing. */
    private static final int START_STALL_TIMEOUTS = 10;
    private static final long START_POLL_MS = 20;

    /**
     * What the process hosts: {@code groups} counters with ids {@code 0..groups-1}, each with
     * {@code peers} as its initial members (empty configurations when {@code self} is not listed:
     * every group then waits to be added).
     */
    public record Settings(Path dataDir, PeerId self, List<PeerId> peers, int electionTimeoutMs, int snapshotIntervalSecs, int groups) {
        public Settings {
            Objects.requireNonNull(dataDir, "dataDir");
            Objects.requireNonNull(self, "self");
            peers = List.copyOf(peers);
            if (groups < 1) {
                throw new IllegalArgumentException("a process hosts at least one group, was " + groups);
            }
        }

        boolean member() {
            return peers.contains(self);
        }
    }

    /** One hosted replica and what it owns. */
    private record Hosted(RaftGroupService service, Node node, CounterStateMachine counter, RocksDbLogStorage log,
                          RocksDbMetaStorage meta, LocalSnapshotStorage snapshots) {
    }

    private final Settings settings;
    private final Map<String, Hosted> hosted = new ConcurrentHashMap<>();
    private final RaftClientService clients = new RaftClientService();
    private final ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "counter-groups-watcher");
        t.setDaemon(true);
        return t;
    });
    private Path data;
    private RocksDbStore store;
    private GrpcRaftTransport transport;
    /** Timing wheel (the process's shared one) and pools of every hosted group. */
    private final RaftRuntime runtime = RaftRuntime.create(io.wheelraft.timer.Timers.shared(), RAFT_THREADS,
            DISK_THREADS, Math.max(2, Runtime.getRuntime().availableProcessors()));
    /** A slot not given back by then (a node that stopped mid-round) is taken back: three election timeouts cover a pre-vote and a vote round. */
    private final CampaignSlots campaignSlots;
    private int lastLeading = -1;
    /**
     * The hosted groups whose counter was told it leads and not told since that it stopped: what
     * the once-a-second log line counts. Counting {@link Node#isLeader} over every hosted group
     * each second was 44 % of an idle 100,000-group process's CPU samples.
     */
    private final Set<String> leaderships = ConcurrentHashMap.newKeySet();
    private boolean closed;
    /** Every group's initial members: one immutable instance shared by all (and so its protobuf form, built once). */
    private final Configuration initialConfiguration;
    /**
     * The names in the data directory when the start began, while the start runs; null after it.
     * A group without a directory of its own there has no legacy meta file and no snapshot, so
     * its start skips looking for them: two file-system probes per group, about a tenth of a
     * group's start when the directory holds nothing but the store.
     */
    private volatile Set<String> namesAtStart;

    /** {@link #CAMPAIGN_LIMIT}, or the property's value: a usage error names a value that is not a positive number. */
    static int campaignLimit(String property) {
        return positiveProperty(CAMPAIGN_LIMIT_PROPERTY, property, CAMPAIGN_LIMIT, "groups");
    }

    /** {@link #START_AWAKE_LIMIT}, or the property's value: a usage error names a value that is not a positive number. */
    static int startAwakeLimit(String property) {
        return positiveProperty(START_AWAKE_LIMIT_PROPERTY, property, START_AWAKE_LIMIT, "groups");
    }

    /** The unserved wait: {@code fallback}, or the property's value (a positive number). */
    static int quiesceUnservedAfterMs(String property, int fallback) {
        return boundedProperty(QUIESCE_UNSERVED_AFTER_PROPERTY, property, fallback, 0, "a number of milliseconds, 0 or more");
    }

    /** How long a settled group waits before going quiet: {@code electionTimeoutMs}, or the property's value (a positive number). */
    static int quiesceAfterMs(String property, int electionTimeoutMs) {
        return positiveProperty(QUIESCE_AFTER_PROPERTY, property, electionTimeoutMs, "milliseconds");
    }

    /**
     * How long a peer process may give no sign of life before it counts as silent:
     * {@link #LIVENESS_SILENCE_TIMEOUTS} election timeouts (at least the transport's default), or
     * the property's value (a positive number of milliseconds).
     */
    static long livenessSilenceMs(String property, int electionTimeoutMs) {
        long fallback = Math.max(RpcOptions.defaults().livenessSilenceMs(), (long) LIVENESS_SILENCE_TIMEOUTS * electionTimeoutMs);
        return positiveProperty(LIVENESS_SILENCE_PROPERTY, property, (int) Math.min(Integer.MAX_VALUE, fallback), "milliseconds");
    }

    private static int positiveProperty(String name, String value, int fallback, String unit) {
        return boundedProperty(name, value, fallback, 1, "a positive number of " + unit);
    }

    private static int boundedProperty(String name, String value, int fallback, int min, String what) {
        if (value == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(value.strip());
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw CliException.usage("-D" + name + "='" + value + "' is not " + what);
    }

    private CounterGroups(Settings settings) {
        this.settings = settings;
        this.initialConfiguration = settings.member() ? new Configuration(settings.peers()) : Configuration.empty();
        this.campaignSlots = new CampaignSlots(campaignLimit(System.getProperty(CAMPAIGN_LIMIT_PROPERTY)), 3L * settings.electionTimeoutMs());
    }

    /** The id of counter group {@code index} of a server started with {@code --groups N} ({@code 0 <= index < N}). */
    public static String groupId(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("a counter group number is 0 or more, was " + index);
        }
        return Integer.toString(index);
    }

    /** The ids of groups {@code 0..count-1}. */
    static List<String> groupIds(int count) {
        List<String> ids = new ArrayList<>(count);
        for (int g = 0; g < count; g++) {
            ids.add(groupId(g));
        }
        return ids;
    }

    /**
     * Opens the shared store, binds the port and starts groups {@code 0..groups-1}.
     *
     * @throws CliException (exit 1) naming the data directory, port or group that cannot start
     */
    public static CounterGroups start(Settings settings, MeterRegistry registry) {
        CounterGroups groups = new CounterGroups(settings);
        try {
            groups.doStart(registry);
            return groups;
        } catch (RuntimeException e) {
            groups.close();
            throw e;
        }
    }

    private void doStart(MeterRegistry registry) {
        data = CounterServer.prepareDataDir(settings.dataDir());
        try {
            store = RocksDbStore.open(data.resolve("log"));
        } catch (RuntimeException e) {
            throw new CliException(CliException.FAILED, "cannot open the data directory " + data + ": " + e.getMessage(), e);
        }
        RpcOptions defaults = RpcOptions.defaults();
        long silenceMs = livenessSilenceMs(System.getProperty(LIVENESS_SILENCE_PROPERTY), settings.electionTimeoutMs());
        transport = CounterServer.bind(settings.self(), clients, RpcOptions.builder().liveness(defaults.livenessIntervalMs(), silenceMs));
        long started = System.nanoTime();
        List<String> ids = groupIds(settings.groups());
        // One write registers every new group's log: one each would queue behind the synced term,
        // vote and append writes of the groups already started, and starting would take a WAL sync per group.
        try {
            store.registerGroups(ids);
        } catch (RuntimeException e) {
            throw new CliException(CliException.FAILED, "cannot register the groups' logs in " + data + ": " + CounterServer.oneLine(e), e);
        }
        namesAtStart = namesIn(data);
        int awakeLimit = startAwakeLimit(System.getProperty(START_AWAKE_LIMIT_PROPERTY));
        StartPacing pacing = new StartPacing(awakeLimit, START_STALL_TIMEOUTS * (long) settings.electionTimeoutMs(),
                START_POLL_MS, new StartPacing.AwakeGroups() {
                    @Override
                    public int count() {
                        return awake();
                    }

                    @Override
                    public void forget() {
                        notYetQuiet.clear();
                    }
                }, () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()), Thread::sleep);
        try {
            for (String g : ids) {
                try {
                    pacing.beforeStart();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CliException(CliException.FAILED, "interrupted while starting group '" + g + "'", e);
                }
                addGroup(g);
                if (settings.member()) {
                    notYetQuiet.add(hosted.get(g).node());
                }
            }
        } finally {
            namesAtStart = null; // groups added from now on look for their files
        }
        notYetQuiet.clear();
        startWaitedMs = pacing.waitedMs();
        if (pacing.waitedMs() > 0) {
            LOG.info("waited {} ms in all for started groups to go quiet before starting more (at most {} awake at once; {} stalled"
                    + " waves written off{})", pacing.waitedMs(), awakeLimit, pacing.stalls(), pacing.gaveUp() ? ", then no more pacing" : "");
        }
        Gauge.builder("counter.groups.hosted", hosted, Map::size).description("counter groups this process hosts").register(registry);
        Gauge.builder("counter.groups.leading", this, CounterGroups::leading).description("hosted groups this process leads").register(registry);
        CounterServiceImpl.registerLeaderQuestions(clients, registry);
        watcher.scheduleWithFixedDelay(this::logLeading, 1, 1, TimeUnit.SECONDS);
        LOG.info("counter node {} serving {} groups on {} (data {}, {}, election timeout {} ms), started in {} ms", settings.self(),
                settings.groups(), transport.endpoint(), data,
                settings.member() ? "members " + settings.peers() : "not a member yet: waiting to be added", settings.electionTimeoutMs(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    /** The names of the entries in {@code dir}, read once. */
    private static Set<String> namesIn(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(HashSet::new));
        } catch (IOException e) {
            throw new CliException(CliException.FAILED, "cannot list the data directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * Starts this process's replica of {@code groupId} with the settings' members, recovering it from
     * the store and its files if it ran here before, and serves it to clients and the admin service.
     *
     * @throws IllegalStateException if the group is hosted already or this engine is closed
     * @throws CliException          (exit 1) if its storage cannot be opened or its node refuses to start
     */
    public synchronized void addGroup(String groupId) {
        if (closed) {
            throw new IllegalStateException("the counter groups of " + settings.self() + " are closed");
        }
        if (hosted.containsKey(groupId)) {
            throw new IllegalStateException("group '" + groupId + "' is already hosted by " + settings.self());
        }
        RocksDbMetaStorage meta = null;
        LocalSnapshotStorage snapshots = null;
        RocksDbLogStorage log = null;
        RaftGroupService service = null;
        try {
            boolean mayHaveFiles = namesAtStart == null || namesAtStart.contains(groupId);
            meta = openMeta(groupId, mayHaveFiles);
            try {
                Path snapshotDir = data.resolve(groupId).resolve("snapshot");
                snapshots = mayHaveFiles ? LocalSnapshotStorage.openLazily(snapshotDir) : LocalSnapshotStorage.openAbsent(snapshotDir);
                log = store.logStorage(groupId);
            } catch (RuntimeException e) {
                throw new CliException(CliException.FAILED, "cannot open the storage of group '" + groupId + "' in " + data + ": "
                        + CounterServer.oneLine(e), e);
            }
            CounterStateMachine counter = new CounterStateMachine(false);
            counter.leadershipListener(leading -> {
                if (leading) {
                    leaderships.add(groupId);
                } else {
                    leaderships.remove(groupId);
                }
            });
            ExactlyOnceStateMachine stateMachine = new ExactlyOnceStateMachine(counter);
            NodeOptions options = new NodeOptions()
                    .electionTimeoutMs(settings.electionTimeoutMs())
                    .snapshotIntervalSecs(settings.snapshotIntervalSecs())
                    .initialConfiguration(initialConfiguration)
                    .stateMachine(stateMachine)
                    .applyInline(true) // as the single counter: onApply is a few operations in memory
                    // Appends go to the store's group commit: written inline they would fsync on whichever
                    // thread delivered the append, often a transport I/O thread that many groups and the
                    // per-process liveness pings share.
                    .writeInline(false)
                    .logStorage(log)
                    .metaStorage(meta)
                    .snapshotStorage(snapshots)
                    .nodeMetrics(false) // not exported (see the class comment); saves the meters of every node
                    .logRoleChanges(false) // a line per group and change flooded the log at a start or a failover
                    // A group idle for an election timeout goes quiet: no timer, no heartbeat of its own
                    // (the transport's per-process liveness watch stands in for them).
                    .quiesceAfterMs(quiesceAfterMs(System.getProperty(QUIESCE_AFTER_PROPERTY), settings.electionTimeoutMs()))
                    // A leadership that has served nothing (every group at a start, most after a
                    // failover) asks for quiet at its first heartbeat after it settles.
                    .quiesceUnservedAfterMs(quiesceUnservedAfterMs(System.getProperty(QUIESCE_UNSERVED_AFTER_PROPERTY),
                            NodeOptions.DEFAULT_QUIESCE_UNSERVED_AFTER_MS))
                    // Each group prefers one process as its leader, spread by a hash of the group id
                    // (the voter its first election starts on): leadership returns there when that
                    // process is up, so a kill of one process fails over about a third of the groups,
                    // not however many start-up churn and earlier failovers left it leading.
                    .electionPriority(preferredHere(groupId) ? PREFERRED_PRIORITY : NodeOptions.DEFAULT_ELECTION_PRIORITY)
                    // The leader's cache of recent entries is per group: 2,048 slots each (the single
                    // counter's default) would be 8 KiB per replica; catch-up reads storage past it.
                    .logCacheEntries(LOG_CACHE_ENTRIES)
                    // Every group of the process shares one bound on campaigns at once: when a peer
                    // process dies holding thousands of leaderships, the groups fail over in waves.
                    .campaignSlots(campaignSlots);
            try {
                options.validate();
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            service = new RaftGroupService(groupId, settings.self(), options, transport, runtime);
            Node node;
            try {
                node = service.start();
            } catch (RuntimeException e) {
                throw new CliException(CliException.FAILED, "group '" + groupId + "' cannot start on " + data + ": " + CounterServer.oneLine(e), e);
            }
            if (node.status().role() == Role.ERROR) {
                var why = counter.lastError();
                throw new CliException(CliException.FAILED, "group '" + groupId + "' cannot start on " + data + ": "
                        + (why == null ? "its node stopped at start (role error); see the log above" : why.message()));
            }
            counter.roleSource(() -> node.status().role());
            hosted.put(groupId, new Hosted(service, node, counter, log, meta, snapshots));
            transport.nodes().register(node);
            clients.addGroup(node, stateMachine);
        } catch (RuntimeException e) {
            stopQuietly(service);
            closeStorage(groupId, log, meta, snapshots);
            throw e;
        }
    }

    /**
     * The term and vote of {@code groupId} from the store, first moving them there from the group's
     * {@code meta} file if an earlier layout left one (checked first: a damaged meta must refuse
     * before anything else is touched).
     */
    /** Is this process the one {@code groupId} prefers as its leader (among the initial members, sorted)? */
    private boolean preferredHere(String groupId) {
        if (!settings.member()) {
            return false;
        }
        java.util.List<PeerId> voters = settings.peers().stream().sorted().toList();
        return PreferredLeader.of(groupId, voters).equals(settings.self());
    }

    private RocksDbMetaStorage openMeta(String groupId, boolean mayHaveFiles) {
        Path metaDir = data.resolve(groupId).resolve("meta");
        RocksDbMetaStorage meta = null;
        try {
            meta = store.metaStorage(groupId);
            if (mayHaveFiles) {
                meta.takeOverFileMeta(metaDir);
            }
            return meta;
        } catch (RuntimeException e) {
            closeStorage(groupId, null, meta, null);
            if (e instanceof LogCorruptionException) {
                throw new CliException(CliException.FAILED, "the raft meta of group '" + groupId + "' in " + data + " is damaged ("
                        + CounterServer.oneLine(e) + "); it cannot be repaired in place because this replica's term and vote would be"
                        + " forgotten and it could vote twice in one term; remove this replica from the group (admin remove-peer),"
                        + " wipe " + data + ", then add it back (admin add-peer): see docs/storage.md", e);
            }
            throw new CliException(CliException.FAILED, "cannot read the raft meta of group '" + groupId + "' in " + data + ": "
                    + CounterServer.oneLine(e), e);
        }
    }

    /** Client streams opened on this process's client service so far (one per client process, however many groups it writes). */
    long clientStreamsOpened() {
        return clients.streamsOpened();
    }

    /**
     * Stops this process's replica of {@code groupId}: clients and the admin service no longer reach
     * it, its node shuts down, and its log, meta and snapshots are released (they stay on disk, so
     * adding the group again recovers it). Membership is the caller's: remove the replica from the
     * group first ({@code admin remove-peer}) if the others should stop counting on it.
     *
     * @return false if the group was not hosted here
     */
    public synchronized boolean removeGroup(String groupId) throws InterruptedException {
        Hosted h = hosted.remove(groupId);
        if (h == null) {
            return false;
        }
        clients.removeGroup(groupId);
        transport.nodes().unregister(h.node());
        if (!h.service().shutdown(SHUTDOWN_WAIT_MS)) {
            LOG.warn("group '{}' did not finish shutting down within {} ms; releasing its storage anyway", groupId, SHUTDOWN_WAIT_MS);
        }
        leaderships.remove(groupId); // its last leadership may have ended with the node, unreported
        closeStorage(groupId, h.log(), h.meta(), h.snapshots());
        return true;
    }

    /** The ids of the hosted groups, sorted. */
    public Set<String> groupIds() {
        return new TreeSet<>(hosted.keySet());
    }

    /** The node of a hosted group, or null. */
    public Node node(String groupId) {
        Hosted h = hosted.get(groupId);
        return h == null ? null : h.node();
    }

    /** The counter of a hosted group, or null. */
    public CounterStateMachine counter(String groupId) {
        Hosted h = hosted.get(groupId);
        return h == null ? null : h.counter();
    }

    /** The hosted groups whose counter was told it leads (the log line's figure; lags {@link #leading} by the apply lane). */
    int leadershipsTold() {
        return leaderships.size();
    }

    /** How many hosted groups this process leads now. */
    public int leading() {
        int n = 0;
        for (Hosted h : hosted.values()) {
            if (h.node().isLeader()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Groups started by {@link #doStart} that have not gone quiet yet (electing or heartbeating;
     * none for a process that is not a member, see {@link #startWaitedMs()}): those seen quiet
     * are dropped, so each count visits at most the awake ones, not every hosted
     * group (at 10,000 groups visiting all of them every poll was 3-4 % of the three processes'
     * CPU during a start). A group that wakes again later is not counted: pacing is about the
     * start's own elections. Only the starting thread uses it.
     */
    private final ArrayDeque<Node> notYetQuiet = new ArrayDeque<>();
    /** How long {@link #doStart} waited for started groups to go quiet; see {@link #startWaitedMs()}. */
    private volatile long startWaitedMs;

    /**
     * How long the start waited, in all, for started groups to go quiet before starting more
     * ({@link StartPacing}). Always 0 for a process that is not a member (its {@code --self} is
     * not in {@code --peers}): its groups have empty configurations and never campaign, so
     * they load nothing and are not paced. Pacing them anyway stalled such a start for
     * {@value StartPacing#STALLS_TO_GIVE_UP} waves of {@value #START_STALL_TIMEOUTS} election
     * timeouts each (30 s at the default timeout) waiting for groups that could never go quiet.
     */
    public long startWaitedMs() {
        return startWaitedMs;
    }

    private int awake() {
        notYetQuiet.removeIf(Node::isQuiet);
        return notYetQuiet.size();
    }

    /** {@code host:port} the server listens on. */
    public String endpoint() {
        return transport.endpoint();
    }

    /** One log line when the number of groups led here changes (per-group role lines would be thousands). */
    private void logLeading() {
        try {
            int now = leaderships.size();
            if (now != lastLeading) {
                lastLeading = now;
                LOG.info("leading {} of {} groups", now, hosted.size());
            }
        } catch (RuntimeException e) {
            LOG.debug("leader count failed: {}", e.toString());
        }
    }

    private static void stopQuietly(RaftGroupService service) {
        if (service == null) {
            return;
        }
        try {
            service.shutdown(SHUTDOWN_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.debug("stopping a group that failed to start: {}", e.toString());
        }
    }

    private static void closeStorage(String groupId, RocksDbLogStorage log, RocksDbMetaStorage meta, LocalSnapshotStorage snapshots) {
        for (AutoCloseable c : new AutoCloseable[]{log, snapshots, meta}) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing the storage of group '{}': {}", groupId, e.toString());
            }
        }
    }

    /** Stops every group (all at once, then waits for each), the transport and the store. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        watcher.shutdownNow();
        List<Map.Entry<String, Hosted>> all = new ArrayList<>(hosted.entrySet());
        hosted.clear();
        for (Map.Entry<String, Hosted> e : all) {
            clients.removeGroup(e.getKey());
            if (transport != null) {
                transport.nodes().unregister(e.getValue().node());
            }
            e.getValue().node().shutdown(null);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_WAIT_MS);
        try {
            for (Map.Entry<String, Hosted> e : all) {
                long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                e.getValue().service().shutdown(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Map.Entry<String, Hosted> e : all) {
            Hosted h = e.getValue();
            closeStorage(e.getKey(), h.log(), h.meta(), h.snapshots());
        }
        if (transport != null) {
            transport.close();
            transport = null;
        }
        if (store != null) {
            store.close();
            store = null;
        }
        runtime.close();
    }
}
