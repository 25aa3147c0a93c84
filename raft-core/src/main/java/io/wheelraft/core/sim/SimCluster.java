package io.wheelraft.core.sim;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.node.NodeImpl;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.ObjIntConsumer;

/**
 * A deterministic cluster of real {@link NodeImpl}s on one thread: a manual clock drives the
 * shared wheel, {@link SimNetwork} carries messages with faults, nodes crash and restart from
 * their (in-memory) storage. Everything random derives from one seed: a failing seed replays
 * exactly with {@code new SimCluster(seed, ...)}. Users test their own state machines with it.
 *
 * <p>Checks election safety after every step: two leaders in one term fail the run at once.
 */
public final class SimCluster {

    public static final String GROUP = "sim";

    private final long seed;
    private final String groupId;
    private final SimRuntime runtime;
    private final SimNetwork network;
    private final Random random;
    private final List<PeerId> peers = new ArrayList<>();
    private final IntFunction<StateMachine> stateMachines;
    /** Adjusts member {@code i}'s options before each start. */
    private final ObjIntConsumer<NodeOptions> tuning;
    private final int initialVoters;
    /** Members that run as witnesses (NodeOptions.witness); those among the initial voters are marked in its configuration. */
    private final java.util.Set<Integer> witnesses;
    /** Null: every member keeps its in-memory storage across crashes. */
    private final StorageFactory storageFactory;
    private final List<Member> members = new ArrayList<>();
    private final Map<Long, PeerId> leaderOfTerm = new HashMap<>();
    private int restarts;

    /** One member: its durable storage (kept across crashes) and its current incarnation. */
    private static final class Member {
        final SimLogStorage log = new SimLogStorage(new MemoryLogStorage());
        final MemoryMetaStorage meta = new MemoryMetaStorage();
        final MemorySnapshotStorage snapshots = new MemorySnapshotStorage();
        NodeImpl node;
        /** The current incarnation's meta, which writes term and vote later. */
        SimLaterMetaStorage laterMeta;
        StateMachine stateMachine;
        boolean up;
        int incarnation;
        boolean detectCorruptionAtRestart;
    }

    /** The storages one incarnation of a member runs on. */
    public record NodeStorage(LogStorage log, RaftMetaStorage meta, SnapshotStorage snapshots) {
    }

    /**
     * Opens a member's storage (e.g. durable storage in a test directory) instead of the default
     * in-memory one. Called on the simulation thread when member {@code member} starts, with
     * {@code incarnation} 0, and again on each restart with the next incarnation: it must return
     * what that member persisted before. The cluster never closes storage; a factory holding an
     * exclusive resource (a RocksDB directory lock) releases the previous incarnation's storage
     * before opening it again, which is the closest a single process can come to a process death.
     */
    @FunctionalInterface
    public interface StorageFactory {
        NodeStorage open(int member, int incarnation);
    }

    /**
     * @param stateMachines makes the state machine of member {@code i} (called again on each restart)
     * @param tuning        adjusts each member's options (election timeout, ...) before start
     */
    public SimCluster(long seed, int size, IntFunction<StateMachine> stateMachines, Consumer<NodeOptions> tuning) {
        this(seed, size, size, stateMachines, tuning, null);
    }

    /**
     * A cluster whose first {@code initialVoters} members form the group; the others start empty
     * (as joining nodes do) until a membership change adds them.
     */
    public SimCluster(long seed, int size, int initialVoters, IntFunction<StateMachine> stateMachines, Consumer<NodeOptions> tuning) {
        this(seed, size, initialVoters, stateMachines, tuning, null);
    }

    /**
     * A cluster whose members run on the storage {@code storageFactory} opens (on each start and
     * restart) instead of in-memory storage; otherwise as the constructor above.
     */
    public SimCluster(long seed, int size, IntFunction<StateMachine> stateMachines, Consumer<NodeOptions> tuning,
                      StorageFactory storageFactory) {
        this(seed, size, size, stateMachines, tuning, storageFactory);
    }

    /** The general form: joining members beyond {@code initialVoters}, storage from {@code storageFactory} (null: in memory). */
    public SimCluster(long seed, int size, int initialVoters, IntFunction<StateMachine> stateMachines, Consumer<NodeOptions> tuning,
                      StorageFactory storageFactory) {
        this(seed, size, initialVoters, java.util.Set.of(), stateMachines, tuning, storageFactory);
    }

    /**
     * As the general form, with options adjusted per member: {@code memberTuning} gets member
     * {@code i}'s options (and {@code i}) before each start, e.g. to give members different
     * election priorities.
     */
    public SimCluster(long seed, int size, int initialVoters, IntFunction<StateMachine> stateMachines, ObjIntConsumer<NodeOptions> memberTuning,
                      StorageFactory storageFactory) {
        this(seed, size, initialVoters, java.util.Set.of(), stateMachines, memberTuning, storageFactory);
    }

    /**
     * A cluster with witnesses: members whose index is in {@code witnesses} run as witnesses
     * ({@link NodeOptions#witness}); those among the first {@code initialVoters} are marked as
     * witnesses in the initial configuration, the others start empty and are added later (e.g.
     * by {@link Node#addWitness}). {@code stateMachines} may return null for a witness.
     */
    public SimCluster(long seed, int size, int initialVoters, java.util.Set<Integer> witnesses, IntFunction<StateMachine> stateMachines,
                      Consumer<NodeOptions> tuning, StorageFactory storageFactory) {
        this(seed, size, initialVoters, witnesses, stateMachines, (o, i) -> tuning.accept(o), storageFactory);
    }

    /** The most general form: witnesses, and options adjusted per member (see the forms above). */
    public SimCluster(long seed, int size, int initialVoters, java.util.Set<Integer> witnesses, IntFunction<StateMachine> stateMachines,
                      ObjIntConsumer<NodeOptions> memberTuning, StorageFactory storageFactory) {
        this(seed, null, null, GROUP, size, initialVoters, witnesses, stateMachines, memberTuning, storageFactory);
    }

    /**
     * One group of several on shared simulated processes ({@link SimGroups}): its members run in
     * the processes of {@code network}, on {@code runtime}'s wheel, as group {@code groupId}.
     */
    SimCluster(long seed, SimRuntime runtime, SimNetwork network, String groupId, int size, IntFunction<StateMachine> stateMachines,
               ObjIntConsumer<NodeOptions> memberTuning) {
        this(seed, runtime, network, groupId, size, size, java.util.Set.of(), stateMachines, memberTuning, null);
    }

    private SimCluster(long seed, SimRuntime sharedRuntime, SimNetwork sharedNetwork, String groupId, int size, int initialVoters,
                       java.util.Set<Integer> witnesses, IntFunction<StateMachine> stateMachines,
                       ObjIntConsumer<NodeOptions> memberTuning, StorageFactory storageFactory) {
        if (size < 1) {
            throw new IllegalArgumentException("cluster size must be >= 1, was " + size);
        }
        if (initialVoters < 1 || initialVoters > size) {
            throw new IllegalArgumentException("initialVoters must be in 1.." + size + ", was " + initialVoters);
        }
        this.initialVoters = initialVoters;
        this.witnesses = java.util.Set.copyOf(witnesses);
        this.seed = seed;
        this.groupId = groupId;
        this.random = new Random(seed);
        long runtimeSeed = random.nextLong();
        long networkSeed = random.nextLong();
        this.runtime = sharedRuntime != null ? sharedRuntime : new SimRuntime(runtimeSeed);
        this.network = sharedNetwork != null ? sharedNetwork : new SimNetwork(runtime, new Random(networkSeed), new SimFaults());
        this.stateMachines = stateMachines;
        this.tuning = memberTuning;
        this.storageFactory = storageFactory;
        for (int i = 0; i < size; i++) {
            peers.add(new PeerId("n" + (i + 1), 1000 + i + 1));
            members.add(new Member());
        }
        for (int i = 0; i < size; i++) {
            startMember(i);
        }
    }

    private void startMember(int i) {
        Member m = members.get(i);
        PeerId id = peers.get(i);
        NodeStorage storage = storageFactory == null
                ? new NodeStorage(m.log, m.meta, m.snapshots)
                : storageFactory.open(i, m.incarnation);
        if (storageFactory == null && m.incarnation > 0) {
            m.log.restart(m.detectCorruptionAtRestart);
            m.detectCorruptionAtRestart = false;
        }
        m.incarnation++;
        m.stateMachine = stateMachines.apply(i);
        m.laterMeta = new SimLaterMetaStorage(storage.meta(), runtime.timer(), new Random(seed * 7_000_003L + i * 104_729L + restarts));
        NodeOptions o = new NodeOptions()
                .initialConfiguration(i < initialVoters ? initialConfiguration() : Configuration.empty())
                .witness(witnesses.contains(i))
                .stateMachine(m.stateMachine)
                .logStorage(storage.log())
                .metaStorage(m.laterMeta)
                .snapshotStorage(storage.snapshots())
                .timer(runtime.timer())
                .snapshotIntervalSecs(0)
                .randomSeed(seed * 1_000_003L + i * 7919L + restarts);
        tuning.accept(o, i);
        m.node = new NodeImpl(groupId, id, o, network.transport(id.endpoint()), runtime).start();
        m.up = true;
    }

    /** The first {@code initialVoters} members, the witnesses among them marked. */
    private Configuration initialConfiguration() {
        Configuration conf = new Configuration(peers.subList(0, initialVoters));
        for (int w : witnesses) {
            if (w < initialVoters) {
                conf = conf.withWitness(peers.get(w));
            }
        }
        return conf;
    }

    public long seed() {
        return seed;
    }

    /** Does member {@code i} run as a witness? */
    public boolean isWitness(int i) {
        return witnesses.contains(i);
    }

    /** A message to print with a failure: the seed and how to replay it. */
    public String replayHint() {
        return "seed " + seed + " (replay: new SimCluster(" + seed + "L, ...) with the same test, or -Dwheelraft.sim.seed=" + seed + ")";
    }

    public SimNetwork network() {
        return network;
    }

    public SimFaults faults() {
        return network.faults();
    }

    /** The cluster's random source for test decisions (derived from the seed). */
    public Random random() {
        return random;
    }

    public long nowMs() {
        return runtime.nowMs();
    }

    public int size() {
        return members.size();
    }

    public PeerId peer(int i) {
        return peers.get(i);
    }

    public Node node(int i) {
        return members.get(i).node;
    }

    public StateMachine stateMachine(int i) {
        return members.get(i).stateMachine;
    }

    public boolean isUp(int i) {
        return members.get(i).up;
    }

    /** Member {@code i}'s in-memory log (only for clusters without a {@link StorageFactory}). */
    public MemoryLogStorage logStorage(int i) {
        return simLog(i).disk();
    }

    /** Member {@code i}'s log with its disk faults (only for clusters without a {@link StorageFactory}). */
    public SimLogStorage simLog(int i) {
        if (storageFactory != null) {
            throw new IllegalStateException("member " + i + " runs on storage from a StorageFactory, not in memory");
        }
        return members.get(i).log;
    }

    /** Member {@code i}'s meta storage (term, vote, repairing flag; its {@code faults()} fail writes). */
    public MemoryMetaStorage metaStorage(int i) {
        return members.get(i).meta;
    }

    /** Member {@code i}'s snapshot storage (its {@code faults()} fail commits and chunk writes). */
    public MemorySnapshotStorage snapshotStorage(int i) {
        return members.get(i).snapshots;
    }

    /**
     * Member {@code i}'s disk is repaired while it is down (faults cleared; corrupt entries are
     * found when it next opens its log, which drops them and what follows, as a verifying open
     * does): it restarts fenced and is repaired from the leader.
     */
    public void repairDisk(int i) {
        Member m = members.get(i);
        m.log.disk().faults().clear();
        m.meta.faults().clear();
        m.snapshots.faults().clear();
        m.detectCorruptionAtRestart = true;
    }

    /** Advances virtual time by {@code ms}, one millisecond at a time. */
    public void runFor(long ms) {
        for (long t = 0; t < ms; t++) {
            step();
        }
    }

    /** Steps until {@code condition} holds, at most {@code maxMs}; true if it held. */
    public boolean runUntil(BooleanSupplier condition, long maxMs) {
        return stepUntil(condition, maxMs, this::step);
    }

    /** Runs {@code step} (one simulated ms) until {@code condition} holds, at most {@code maxMs} times; true if it held. */
    static boolean stepUntil(BooleanSupplier condition, long maxMs, Runnable step) {
        for (long t = 0; t < maxMs; t++) {
            if (condition.getAsBoolean()) {
                return true;
            }
            step.run();
        }
        return condition.getAsBoolean();
    }

    private void step() {
        runtime.step();
        checkElectionSafety();
    }

    /** Raft §5.2: at most one leader per term, over the whole run. */
    private void checkElectionSafety() {
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (!m.up || m.node.status().role() != Role.LEADER) {
                continue;
            }
            long term = m.node.status().term();
            PeerId prior = leaderOfTerm.putIfAbsent(term, peers.get(i));
            if (prior != null && !prior.equals(peers.get(i))) {
                throw new AssertionError("two leaders in term " + term + ": " + prior + " and " + peers.get(i) + "; " + replayHint());
            }
        }
    }

    /** The live leader of the highest term, or -1. */
    public int leaderIndex() {
        int best = -1;
        long bestTerm = -1;
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (m.up && m.node.isLeader() && m.node.status().term() > bestTerm) {
                best = i;
                bestTerm = m.node.status().term();
            }
        }
        return best;
    }

    /** Number of distinct terms that had a leader so far. */
    public int leaderTerms() {
        return leaderOfTerm.size();
    }

    /**
     * Member {@code i}'s process dies: nothing unsynced survives. {@code breakConnections}: killed
     * (peers notice at once) versus hung or cut off (peers only notice the silence).
     */
    public void crash(int i, boolean breakConnections) {
        if (halt(i)) {
            network.crash(peers.get(i).endpoint(), breakConnections);
        }
    }

    /** Member {@code i}'s node stops (its process is crashing); false if it was down already. */
    boolean halt(int i) {
        Member m = members.get(i);
        if (!m.up) {
            return false;
        }
        m.node.halt();
        m.laterMeta.crash();
        m.up = false;
        return true;
    }

    /** Member {@code i} starts again, its process already restarted (see {@link SimGroups}). */
    void startAgain(int i) {
        if (!members.get(i).up) {
            restarts++;
            startMember(i);
        }
    }

    /** Checks election safety now (for {@link SimGroups}, which steps the shared runtime itself). */
    void checkSafety() {
        checkElectionSafety();
    }

    /** The connection between members {@code i} and {@code j} breaks and heals at once (see {@link SimNetwork#breakConnection}). */
    public void breakConnection(int i, int j) {
        network.breakConnection(peers.get(i).endpoint(), peers.get(j).endpoint());
    }

    /** Member {@code i} starts again from its storage with a fresh state machine. */
    public void restart(int i) {
        Member m = members.get(i);
        if (m.up) {
            return;
        }
        restarts++;
        network.restart(peers.get(i).endpoint());
        startMember(i);
    }

    @SafeVarargs
    public final void partition(List<Integer>... groups) {
        List<String>[] endpoints = new List[groups.length];
        for (int g = 0; g < groups.length; g++) {
            endpoints[g] = groups[g].stream().map(i -> peers.get(i).endpoint()).toList();
        }
        network.partition(endpoints);
    }

    public void heal() {
        network.heal();
    }
}
