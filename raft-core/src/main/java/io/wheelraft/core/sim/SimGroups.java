package io.wheelraft.core.sim;

import io.wheelraft.core.CampaignSlots;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.StateMachine;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Many Raft groups on the same simulated processes, as a multi-group engine runs them: process
 * {@code i} hosts member {@code i} of every group, all groups share one wheel and one network,
 * and a process crash, restart or partition hits every group at once. Each group is a
 * {@link SimCluster} (named {@code g0}, {@code g1}, ...) whose election safety is checked at every
 * simulated millisecond, like a single cluster's.
 */
public final class SimGroups {

    private static final long CAMPAIGN_HOLD_LIMIT_MS = 10_000;

    private final long seed;
    private final SimRuntime runtime;
    private final SimNetwork network;
    private final List<SimCluster> groups = new ArrayList<>();
    private final int processes;
    /** Each process's bound on its groups campaigning at once (unlimited unless asked for). */
    private final List<CampaignSlots> campaignSlots = new ArrayList<>();

    /**
     * @param stateMachines makes the state machine of group {@code g}'s member {@code i} (again on each restart)
     * @param tuning        adjusts every member's options before each start
     */
    public SimGroups(long seed, int processes, int groupCount, BiFunction<Integer, Integer, StateMachine> stateMachines,
                     Consumer<NodeOptions> tuning) {
        this(seed, processes, groupCount, 0, 0, stateMachines, tuning);
    }

    /**
     * As above, with the processes' liveness watch on from the start ({@link SimNetwork#watchLiveness};
     * {@code livenessIntervalMs} 0: off), as quiet groups need it.
     */
    public SimGroups(long seed, int processes, int groupCount, int livenessIntervalMs, int livenessSilenceMs,
                     BiFunction<Integer, Integer, StateMachine> stateMachines, Consumer<NodeOptions> tuning) {
        this(seed, processes, groupCount, livenessIntervalMs, livenessSilenceMs, 0, stateMachines, tuning);
    }

    /**
     * As above, with at most {@code campaignLimit} groups of each process campaigning at once
     * ({@link CampaignSlots}, one per process, a slot taken back after {@code 10 s}; 0: no bound).
     */
    public SimGroups(long seed, int processes, int groupCount, int livenessIntervalMs, int livenessSilenceMs, int campaignLimit,
                     BiFunction<Integer, Integer, StateMachine> stateMachines, Consumer<NodeOptions> tuning) {
        if (groupCount < 1) {
            throw new IllegalArgumentException("at least one group, was " + groupCount);
        }
        this.seed = seed;
        this.processes = processes;
        for (int i = 0; i < processes; i++) {
            campaignSlots.add(campaignLimit > 0 ? new CampaignSlots(campaignLimit, CAMPAIGN_HOLD_LIMIT_MS) : CampaignSlots.unlimited());
        }
        Random random = new Random(seed);
        this.runtime = new SimRuntime(random.nextLong());
        this.network = new SimNetwork(runtime, new Random(random.nextLong()), new SimFaults());
        if (livenessIntervalMs > 0) {
            network.watchLiveness(livenessIntervalMs, livenessSilenceMs);
        }
        for (int g = 0; g < groupCount; g++) {
            int group = g;
            groups.add(new SimCluster(random.nextLong(), runtime, network, "g" + g, processes,
                    i -> stateMachines.apply(group, i), (o, i) -> {
                        tuning.accept(o);
                        o.campaignSlots(campaignSlots.get(i));
                    }));
        }
    }

    /** Process {@code i}'s campaign bound (see {@link CampaignSlots}). */
    public CampaignSlots campaignSlots(int i) {
        return campaignSlots.get(i);
    }

    public String replayHint() {
        return "replay with seed " + seed;
    }

    public SimNetwork network() {
        return network;
    }

    public SimFaults faults() {
        return network.faults();
    }

    public long nowMs() {
        return runtime.clock().millis();
    }

    public int groupCount() {
        return groups.size();
    }

    public int processCount() {
        return processes;
    }

    public SimCluster group(int g) {
        return groups.get(g);
    }

    /** Process {@code i} dies with every member it hosts; {@code breakConnections}: killed (peers told at once) or hung/cut off. */
    public void crashProcess(int i, boolean breakConnections) {
        boolean any = false;
        for (SimCluster c : groups) {
            any |= c.halt(i);
        }
        if (any) {
            network.crash(groups.get(0).peer(i).endpoint(), breakConnections);
        }
    }

    /** Process {@code i} starts again; every member it hosts restarts from its storage. */
    public void restartProcess(int i) {
        network.restart(groups.get(0).peer(i).endpoint());
        for (SimCluster c : groups) {
            c.startAgain(i);
        }
    }

    /** Splits the processes (by member index; every group has the same members) as {@link SimCluster#partition} does. */
    @SafeVarargs
    public final void partition(List<Integer>... sides) {
        groups.get(0).partition(sides); // the network is shared: one group's split is every group's
    }

    public void heal() {
        network.heal();
    }

    public void runFor(long ms) {
        for (long t = 0; t < ms; t++) {
            step();
        }
    }

    /** Steps until {@code condition} holds, at most {@code maxMs}; true if it held. */
    public boolean runUntil(BooleanSupplier condition, long maxMs) {
        return SimCluster.stepUntil(condition, maxMs, this::step);
    }

    private void step() {
        runtime.step();
        for (SimCluster c : groups) {
            c.checkSafety();
        }
    }

    /** How many groups have a live leader. */
    public int groupsWithLeader() {
        int n = 0;
        for (SimCluster c : groups) {
            if (c.leaderIndex() >= 0) {
                n++;
            }
        }
        return n;
    }

    /** The groups whose member on process {@code process} is up and leads. */
    public List<Integer> groupsLedBy(int process) {
        List<Integer> led = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            SimCluster c = groups.get(g);
            if (c.isUp(process) && c.node(process).isLeader()) {
                led.add(g);
            }
        }
        return led;
    }

    /** The process leading the most groups (the lowest index of those tied). */
    public int busiestLeaderProcess() {
        int best = 0;
        for (int p = 1; p < processes; p++) {
            if (groupsLedBy(p).size() > groupsLedBy(best).size()) {
                best = p;
            }
        }
        return best;
    }

    /** How many live members, over all groups, are quiet. */
    public int quietMembers() {
        int n = 0;
        for (SimCluster c : groups) {
            for (int i = 0; i < processes; i++) {
                if (c.isUp(i) && c.node(i).isQuiet()) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Tasks the simulation has run so far, on every simulated pool (see {@link SimExecutor#tasksRun}). */
    public long tasksRun() {
        return runtime.executor().tasksRun();
    }

    /** Pending timeouts on the shared wheel (every timer and message in flight). */
    public long pendingTimeouts() {
        return ((io.wheelraft.timer.HashedWheelTimer) runtime.timer()).pendingTimeouts();
    }
}
