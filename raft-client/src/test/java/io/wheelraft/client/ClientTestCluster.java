package io.wheelraft.client;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.RaftRuntime;
import io.wheelraft.rpc.GrpcRaftTransport;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbStore;
import io.wheelraft.timer.HashedWheelTimer;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A real group of three (or more) nodes in one JVM for the client tests: each member has its own
 * gRPC transport on a loopback port serving Raft and {@link RaftClientService}, RocksDB log, meta
 * and snapshot directory, and a {@link Ledger} wrapped in an {@link ExactlyOnceStateMachine}. A
 * member can be stopped (as an operator or a crash would: its connections reset) and restarted on
 * the same port from its data. Used from the test thread only.
 */
final class ClientTestCluster implements AutoCloseable {

    static final String GROUP = "ledger";

    final class Member {
        final int index;
        final Path dir;
        int port;
        PeerId id;
        GrpcRaftTransport transport;
        RaftClientService service;
        RocksDbStore store;
        FileMetaStorage meta;
        LocalSnapshotStorage snapshots;
        RaftGroupService group;
        Node node;
        Ledger ledger;
        ExactlyOnceStateMachine stateMachine;

        Member(int index, Path dir) {
            this.index = index;
            this.dir = dir;
        }
    }

    private final HashedWheelTimer timer = new HashedWheelTimer();
    private final RaftRuntime runtime = RaftRuntime.create(timer, 2, 2, 2);
    private final List<Member> members = new ArrayList<>();
    private final List<PeerId> peers = new ArrayList<>();
    private final ExactlyOnceStateMachine.Options tableOptions;
    private final Consumer<NodeOptions> tune;

    private final int maxUnansweredPerStream;
    /** The member that runs as a witness, or -1. */
    private final int witness;

    ClientTestCluster(Path root, int size, ExactlyOnceStateMachine.Options tableOptions, Consumer<NodeOptions> tune) {
        this(root, size, tableOptions, tune, RaftClientService.DEFAULT_MAX_UNANSWERED_PER_STREAM);
    }

    ClientTestCluster(Path root, int size, ExactlyOnceStateMachine.Options tableOptions, Consumer<NodeOptions> tune,
                      int maxUnansweredPerStream) {
        this(root, size, tableOptions, tune, maxUnansweredPerStream, -1);
    }

    /** Two data members and a witness (the last member): the configuration marks it, and its service serves it as one. */
    static ClientTestCluster withWitness(Path root) {
        return new ClientTestCluster(root, 3, ExactlyOnceStateMachine.Options.defaults(), o -> { },
                RaftClientService.DEFAULT_MAX_UNANSWERED_PER_STREAM, 2);
    }

    private ClientTestCluster(Path root, int size, ExactlyOnceStateMachine.Options tableOptions, Consumer<NodeOptions> tune,
                              int maxUnansweredPerStream, int witness) {
        this.witness = witness;
        this.maxUnansweredPerStream = maxUnansweredPerStream;
        this.tableOptions = tableOptions;
        this.tune = tune;
        for (int i = 0; i < size; i++) {
            Member m = new Member(i, root.resolve("member-" + i));
            bind(m, 0);
            m.port = m.transport.port();
            m.id = new PeerId("127.0.0.1", m.port);
            members.add(m);
            peers.add(m.id);
        }
        for (Member m : members) {
            startNode(m);
        }
    }

    ClientTestCluster(Path root) {
        this(root, 3, ExactlyOnceStateMachine.Options.defaults(), o -> { });
    }

    private void bind(Member m, int port) {
        m.service = new RaftClientService(maxUnansweredPerStream);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                m.transport = GrpcRaftTransport.builder().listen("127.0.0.1", port).addNonBlockingService(m.service).start();
                return;
            } catch (UncheckedIOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the old socket is still being released
            }
        }
    }

    private void startNode(Member m) {
        m.store = RocksDbStore.open(m.dir.resolve("log"));
        m.meta = FileMetaStorage.open(m.dir.resolve(GROUP + "/meta"));
        m.snapshots = LocalSnapshotStorage.open(m.dir.resolve(GROUP + "/snapshot"));
        boolean isWitness = m.index == witness;
        m.ledger = new Ledger();
        m.stateMachine = new ExactlyOnceStateMachine(m.ledger, tableOptions);
        NodeOptions options = new NodeOptions()
                .electionTimeoutMs(300)
                .initialConfiguration(new Configuration(peers, List.of(), witness < 0 ? List.of() : List.of(peers.get(witness)),
                        java.util.Map.of()))
                .witness(isWitness)
                // a witness needs no state machine: the core applies no data on it
                .stateMachine(isWitness ? null : m.stateMachine)
                .logStorage(m.store.logStorage(GROUP))
                .metaStorage(m.meta)
                .snapshotStorage(m.snapshots)
                .snapshotIntervalSecs(0)
                .snapshotLogMargin(0);
        tune.accept(options);
        m.group = new RaftGroupService(GROUP, m.id, options, m.transport, runtime);
        m.node = m.group.start();
        m.transport.nodes().register(m.node);
        if (isWitness) {
            m.service.addWitnessGroup(m.node);
        } else {
            m.service.addGroup(m.node, m.stateMachine);
        }
    }

    List<String> endpoints() {
        return peers.stream().map(PeerId::endpoint).toList();
    }

    Member member(int i) {
        return members.get(i);
    }

    RaftClient.Builder client() {
        return RaftClient.builder().endpoints(endpoints()).groupId(GROUP);
    }

    /** Waits for a leader every running member follows; returns its index. */
    int awaitLeader() {
        int[] found = {-1};
        await(() -> {
            for (Member m : members) {
                if (m.node != null && m.node.isLeader()) {
                    for (Member o : members) {
                        if (o.node != null && o != m && !m.id.equals(o.node.getLeaderId())) {
                            return false;
                        }
                    }
                    found[0] = m.index;
                    return true;
                }
            }
            return false;
        }, 10_000, () -> "no leader followed by every running member within 10 s");
        return found[0];
    }

    /** Stops member {@code i}: its port closes (connections reset), its node and storage shut down. */
    void stop(int i) throws InterruptedException {
        Member m = members.get(i);
        m.transport.close();
        m.transport = null;
        if (!m.group.shutdown(10_000)) {
            throw new AssertionError("member " + i + " did not shut down");
        }
        m.group = null;
        m.node = null;
        m.store.close();
        m.meta.close();
        m.snapshots.close();
        m.store = null;
    }

    void restart(int i) {
        Member m = members.get(i);
        bind(m, m.port);
        startNode(m);
    }

    /** Waits until every running member has applied what the leader committed. */
    void awaitConverged() {
        await(() -> {
            long commit = -1;
            for (Member m : members) {
                if (m.node != null && m.node.isLeader()) {
                    commit = m.node.status().commitIndex();
                }
            }
            if (commit < 0) {
                return false;
            }
            for (Member m : members) {
                if (m.node != null && m.node.status().appliedIndex() < commit) {
                    return false;
                }
            }
            return true;
        }, 10_000, () -> "members did not converge within 10 s");
    }

    static void await(BooleanSupplier condition, long timeoutMs, Supplier<String> failure) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(failure.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (Member m : members) {
            if (m.group != null) {
                m.group.shutdown(10_000);
            }
        }
        for (Member m : members) {
            if (m.transport != null) {
                m.transport.close();
            }
            if (m.store != null) {
                m.store.close();
                m.meta.close();
                m.snapshots.close();
            }
        }
        runtime.close();
        timer.stop();
    }
}
