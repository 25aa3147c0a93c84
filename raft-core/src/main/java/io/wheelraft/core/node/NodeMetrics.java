package io.wheelraft.core.node;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One node's metrics, registered through Micrometer so a service sees them in the registry it
 * already uses. Tagged with {@code group} and {@code peer}. Gauges read the node's status;
 * latencies are measured per proposed batch (not per entry, to stay off the hot path):
 * append = proposed until durable on the leader, commit = proposed until committed,
 * apply = committed until applied. Recording methods are called from the node's lanes.
 *
 * <p>Without a registry ({@link NodeOptions#nodeMetrics(boolean)} false) it registers nothing and
 * records nothing: a process hosting thousands of groups saves the meters, their ids and the
 * latency marks of every node.
 */
final class NodeMetrics implements AutoCloseable {

    private record Mark(long index, long nanos) {
    }

    /** Null: disabled, every method does nothing. */
    private final MeterRegistry registry;
    private final Tags tags;
    private final Supplier<NodeStatus> status;
    private final List<Meter> meters;
    /** Guarded by {@link #meters}. */
    private boolean closed;
    private final Counter leaderChanges;
    private final Counter electionsStarted;
    private final Counter snapshots;
    private final Timer appendLatency;
    private final Timer commitLatency;
    private final Timer applyLatency;
    private final Timer snapshotDuration;
    /** Raft lane only. */
    private final ArrayDeque<Mark> awaitingDurable;
    private final ArrayDeque<Mark> awaitingCommit;
    /** Raft lane adds, apply lane removes. */
    private final ArrayDeque<Mark> awaitingApply;
    private final Set<PeerId> followersWithGauge;

    /** Records nothing; shared by every node without meters (a process may host many thousands). */
    private static final NodeMetrics NONE = new NodeMetrics(null, null, null, null);

    /** The node's meters, or the shared instance that records nothing when {@code registry} is null. */
    static NodeMetrics of(MeterRegistry registry, String groupId, PeerId self, Supplier<NodeStatus> status) {
        return registry == null ? NONE : new NodeMetrics(registry, groupId, self, status);
    }

    /** @param registry null: no meters (see the class comment) */
    private NodeMetrics(MeterRegistry registry, String groupId, PeerId self, Supplier<NodeStatus> status) {
        this.registry = registry;
        this.status = status;
        if (registry == null) {
            tags = null;
            meters = null;
            leaderChanges = electionsStarted = snapshots = null;
            appendLatency = commitLatency = applyLatency = snapshotDuration = null;
            awaitingDurable = awaitingCommit = awaitingApply = null;
            followersWithGauge = null;
            return;
        }
        this.tags = Tags.of("group", groupId, "peer", self.toString());
        this.meters = new ArrayList<>();
        this.awaitingDurable = new ArrayDeque<>();
        this.awaitingCommit = new ArrayDeque<>();
        this.awaitingApply = new ArrayDeque<>();
        this.followersWithGauge = ConcurrentHashMap.newKeySet();
        gauge("wheelraft.term", "current term", s -> s.term());
        gauge("wheelraft.commit.index", "highest committed index", s -> s.commitIndex());
        gauge("wheelraft.applied.index", "highest index applied to the state machine", s -> s.appliedIndex());
        gauge("wheelraft.apply.lag", "committed but not yet applied entries", s -> s.commitIndex() - s.appliedIndex());
        gauge("wheelraft.last.log.index", "last index in the log", s -> s.lastLogIndex());
        gauge("wheelraft.leader", "1 while this node leads", s -> s.role() == Role.LEADER ? 1 : 0);
        gauge("wheelraft.failed", "1 once this node stopped after a storage or apply failure (until restart)",
                s -> s.role() == Role.ERROR ? 1 : 0);
        gauge("wheelraft.repairing", "1 while this node is fenced, repairing its log from the leader after a storage fault",
                s -> s.role() == Role.REPAIRING ? 1 : 0);
        leaderChanges = register(Counter.builder("wheelraft.leader.changes").description("times the known leader changed").tags(tags).register(registry));
        electionsStarted = register(Counter.builder("wheelraft.elections.started").description("times this node campaigned").tags(tags).register(registry));
        snapshots = register(Counter.builder("wheelraft.snapshots").description("snapshots taken").tags(tags).register(registry));
        appendLatency = timer("wheelraft.append.latency", "proposed until durable on the leader");
        commitLatency = timer("wheelraft.commit.latency", "proposed until committed by a quorum");
        applyLatency = timer("wheelraft.apply.latency", "committed until applied");
        snapshotDuration = timer("wheelraft.snapshot.duration", "snapshot requested until durable");
    }

    private void gauge(String name, String description, java.util.function.ToDoubleFunction<NodeStatus> value) {
        register(Gauge.builder(name, status, s -> value.applyAsDouble(s.get())).description(description).tags(tags).register(registry));
    }

    private Timer timer(String name, String description) {
        return register(Timer.builder(name).description(description).tags(tags).publishPercentileHistogram().register(registry));
    }

    /**
     * Keeps {@code meter} to remove at {@link #close}. Synchronized with it: a node halted from
     * another thread closes its metrics while its lane may still be registering a follower's gauge;
     * a meter registered after the close is removed at once.
     */
    private <M extends Meter> M register(M meter) {
        synchronized (meters) {
            if (closed) {
                registry.remove(meter);
            } else {
                meters.add(meter);
            }
        }
        return meter;
    }

    /** A leader appended entries up to {@code lastIndex}. */
    void proposed(long lastIndex, long nanos) {
        if (registry == null) {
            return;
        }
        awaitingDurable.add(new Mark(lastIndex, nanos));
        awaitingCommit.add(new Mark(lastIndex, nanos));
    }

    void durable(long index, long nanos) {
        if (registry == null) {
            return;
        }
        while (!awaitingDurable.isEmpty() && awaitingDurable.peek().index() <= index) {
            appendLatency.record(nanos - awaitingDurable.poll().nanos(), TimeUnit.NANOSECONDS);
        }
    }

    void committed(long index, long nanos) {
        if (registry == null) {
            return;
        }
        while (!awaitingCommit.isEmpty() && awaitingCommit.peek().index() <= index) {
            commitLatency.record(nanos - awaitingCommit.poll().nanos(), TimeUnit.NANOSECONDS);
        }
        synchronized (awaitingApply) {
            awaitingApply.add(new Mark(index, nanos));
        }
    }

    void applied(long index, long nanos) {
        if (registry == null) {
            return;
        }
        synchronized (awaitingApply) {
            while (!awaitingApply.isEmpty() && awaitingApply.peek().index() <= index) {
                applyLatency.record(nanos - awaitingApply.poll().nanos(), TimeUnit.NANOSECONDS);
            }
        }
    }

    /** Leadership ended: marks of entries that may never commit here are dropped. */
    void roleChanged(Role role, boolean leaderChanged, long nanosNow) {
        if (registry == null) {
            return;
        }
        if (role == Role.CANDIDATE) {
            electionsStarted.increment();
        }
        if (leaderChanged) {
            leaderChanges.increment();
        }
        if (role != Role.LEADER) {
            awaitingDurable.clear();
            awaitingCommit.clear();
        }
    }

    /** On the leader: a replication-lag gauge (leader's last index minus the follower's match) per follower, made on first sight. */
    void followersSeen(Iterable<PeerId> followers) {
        if (registry == null) {
            return;
        }
        for (PeerId f : followers) {
            if (followersWithGauge.add(f)) {
                register(Gauge.builder("wheelraft.replication.lag", status, s -> {
                    NodeStatus st = s.get();
                    Long match = st.followerMatchIndex().get(f);
                    return match == null ? 0 : Math.max(0, st.lastLogIndex() - match);
                }).description("entries the follower is behind the leader (0 when not leader)")
                        .tags(tags.and("follower", f.toString())).register(registry));
            }
        }
    }

    void snapshotTaken(long durationNanos) {
        if (registry == null) {
            return;
        }
        snapshots.increment();
        snapshotDuration.record(durationNanos, TimeUnit.NANOSECONDS);
    }

    /** Removes this node's meters from the registry (the node shut down). */
    @Override
    public void close() {
        if (registry == null) {
            return;
        }
        synchronized (meters) {
            closed = true;
            for (Meter m : meters) {
                registry.remove(m);
            }
            meters.clear();
        }
    }
}
