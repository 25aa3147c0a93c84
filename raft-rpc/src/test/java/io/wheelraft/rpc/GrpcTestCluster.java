package io.wheelraft.rpc;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.RaftRuntime;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbStore;
import io.wheelraft.timer.HashedWheelTimer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Real Raft nodes in one JVM for integration tests: each member has its own
 * {@link GrpcRaftTransport} on a loopback port, its own RocksDB log, meta file and snapshot
 * directory under {@code root}, and a {@link Counter} state machine, started through
 * {@link RaftGroupService} on one {@link RaftRuntime} with its own timing wheel (closed with
 * the cluster). A member can be stopped and restarted on the same port from its data, or have its
 * transport killed while its node keeps running. Used from the test thread only.
 */
final class GrpcTestCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GrpcTestCluster.class);
    static final String GROUP = "counter";
    private static final long SHUTDOWN_WAIT_MS = 10_000;

    /** Adds each entry's 8-byte delta to a counter; the task's closure learns the new value. */
    static final class Counter extends StateMachineAdapter {
        private volatile long value;
        private volatile long appliedIndex;

        static ByteBuffer delta(long d) {
            return ByteBuffer.allocate(8).putLong(0, d);
        }

        long value() {
            return value;
        }

        long appliedIndex() {
            return appliedIndex;
        }

        /** How many snapshots this counter loaded (from the leader or at restart). */
        int snapshotsLoaded() {
            return snapshotsLoaded;
        }

        private volatile int snapshotsLoaded;

        @Override
        public void onSnapshotSave(io.wheelraft.core.spi.SnapshotWriter writer, Closure done) {
            try (var out = new java.io.DataOutputStream(writer.addFile("counter"))) {
                out.writeLong(value);
                out.writeLong(appliedIndex);
            } catch (java.io.IOException e) {
                done.run(Status.error(io.wheelraft.core.RaftError.STATE_MACHINE_ERROR, "cannot write the counter snapshot: " + e));
                return;
            }
            done.run(Status.ok());
        }

        @Override
        public boolean onSnapshotLoad(io.wheelraft.core.spi.SnapshotReader reader) {
            try (var in = new java.io.DataInputStream(reader.openFile("counter"))) {
                long loadedValue = in.readLong();
                long loadedIndex = in.readLong();
                // value is written last: tests poll it, and its volatile write publishes the index
                // and the load count with it, so a reader that sees the loaded value sees them too.
                appliedIndex = loadedIndex;
                snapshotsLoaded++;
                value = loadedValue;
                return true;
            } catch (java.io.IOException e) {
                LOG.error("cannot load the counter snapshot", e);
                return false;
            }
        }

        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                ByteBuffer data = it.next();
                if (it.index() <= appliedIndex) {
                    throw new IllegalStateException("applied index " + it.index() + " after " + appliedIndex);
                }
                long next = value + data.getLong(data.position());
                appliedIndex = it.index();
                value = next; // last, as in onSnapshotLoad: a reader that sees the value sees its index
                Closure done = it.done();
                if (done instanceof Increment inc) {
                    inc.value = value;
                }
                if (done != null) {
                    done.run(Status.ok()); // the state machine runs the task's closure once applied
                }
            }
        }
    }

    /** A task closure completing {@link #result} with the counter value after its increment. */
    static final class Increment implements Closure {
        final CompletableFuture<Long> result = new CompletableFuture<>();
        private long value;

        @Override
        public void run(Status status) {
            if (status.isOk()) {
                result.complete(value);
            } else {
                result.completeExceptionally(new IllegalStateException("increment failed: " + status));
            }
        }
    }

    /** One member: its fixed port and directory, and what runs while it is up. */
    final class Member {
        final int index;
        final Path dir;
        int port;
        PeerId id;
        GrpcRaftTransport transport;
        RocksDbStore store;
        FileMetaStorage meta;
        LocalSnapshotStorage snapshots;
        RaftGroupService service;
        Node node;
        Counter counter;
        boolean transportUp;

        Member(int index, Path dir) {
            this.index = index;
            this.dir = dir;
        }
    }

    private final HashedWheelTimer timer = new HashedWheelTimer();
    private final RaftRuntime runtime = RaftRuntime.create(timer, 2, 2, 2);
    private final int electionTimeoutMs;
    private final List<Member> members = new ArrayList<>();
    private final List<PeerId> peers = new ArrayList<>();

    GrpcTestCluster(Path root, int size, int electionTimeoutMs) {
        this.electionTimeoutMs = electionTimeoutMs;
        // Each transport binds port 0 first; the port it got is the member's address for good, so a
        // restart can come back on it.
        for (int i = 0; i < size; i++) {
            Member m = new Member(i, root.resolve("member-" + i));
            m.transport = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
            m.transportUp = true;
            m.port = m.transport.port();
            m.id = new PeerId("127.0.0.1", m.port);
            members.add(m);
            peers.add(m.id);
        }
        for (Member m : members) {
            startNode(m);
        }
    }

    private void startNode(Member m) {
        m.store = RocksDbStore.open(m.dir.resolve("log"));
        m.meta = FileMetaStorage.open(m.dir.resolve(GROUP + "/meta"));
        m.snapshots = LocalSnapshotStorage.open(m.dir.resolve(GROUP + "/snapshot"));
        m.counter = new Counter();
        NodeOptions options = new NodeOptions()
                .electionTimeoutMs(electionTimeoutMs)
                .initialConfiguration(new Configuration(peers))
                .stateMachine(m.counter)
                .logStorage(m.store.logStorage(GROUP))
                .metaStorage(m.meta)
                .snapshotStorage(m.snapshots)
                .snapshotIntervalSecs(0)
                .snapshotLogMargin(5); // small, so a snapshot compacts past a stopped follower
        m.service = new RaftGroupService(GROUP, m.id, options, m.transport, runtime);
        m.node = m.service.start();
        m.transport.nodes().register(m.node);
    }

    int size() {
        return members.size();
    }

    Member member(int i) {
        return members.get(i);
    }

    Node node(int i) {
        return members.get(i).node;
    }

    Counter counter(int i) {
        return members.get(i).counter;
    }

    int electionTimeoutMs() {
        return electionTimeoutMs;
    }

    /** The member whose running node leads in the highest term, or -1. */
    int leaderIndex() {
        int best = -1;
        long bestTerm = -1;
        for (Member m : members) {
            if (m.node != null && m.node.isLeader() && m.node.status().term() > bestTerm) {
                best = m.index;
                bestTerm = m.node.status().term();
            }
        }
        return best;
    }

    /** Waits for a leader that every other running, reachable member follows; returns its index. */
    int awaitLeader(long timeoutMs) {
        int[] found = {-1};
        await(() -> {
            int leader = leaderIndex();
            if (leader < 0) {
                return false;
            }
            for (Member m : members) {
                if (m.node != null && m.transportUp && m.index != leader && !peers.get(leader).equals(m.node.getLeaderId())) {
                    return false;
                }
            }
            found[0] = leader;
            return true;
        }, timeoutMs, () -> "no leader followed by every running member within " + timeoutMs + " ms; " + describe());
        return found[0];
    }

    /** Proposes an increment of {@code delta} to member {@code i}. */
    Increment increment(int i, long delta) {
        Increment inc = new Increment();
        node(i).apply(new Task(Counter.delta(delta), inc));
        return inc;
    }

    /**
     * Stops member {@code i} as an operator would: its transport closes, its node shuts down and
     * its storage is closed. Its data directory and port number stay for {@link #restart}.
     */
    void stop(int i) throws InterruptedException {
        Member m = members.get(i);
        m.transport.close();
        m.transportUp = false;
        stopNodeAndStorage(m);
    }

    private void stopNodeAndStorage(Member m) throws InterruptedException {
        if (m.service != null) {
            if (!m.service.shutdown(SHUTDOWN_WAIT_MS)) {
                throw new AssertionError("member " + m.index + " did not shut down within " + SHUTDOWN_WAIT_MS + " ms");
            }
            m.service = null;
            m.node = null;
        }
        if (m.store != null) {
            m.store.close();
            m.meta.close();
            m.snapshots.close();
            m.store = null;
        }
    }

    /**
     * Kills member {@code i}'s transport at once (server and channels shut down now, no goodbye),
     * as the network sees a killed process; its node keeps running, cut off.
     */
    void killTransport(int i) {
        Member m = members.get(i);
        m.transport.close();
        m.transportUp = false;
    }

    /** Starts stopped member {@code i} again on its old port, from its data directory. */
    void restart(int i) {
        Member m = members.get(i);
        if (m.node != null) {
            throw new IllegalStateException("member " + i + " is running");
        }
        m.transport = bindAgain(m.port);
        m.transportUp = true;
        startNode(m);
    }

    /**
     * Binds the member's old port. The port was ours a moment ago; binding can still fail briefly
     * if the OS has not released it, so retry within a bounded time rather than fail at once.
     */
    private GrpcRaftTransport bindAgain(int port) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                return GrpcRaftTransport.builder().listen("127.0.0.1", port).start();
            } catch (UncheckedIOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LOG.info("port {} not free yet, retrying: {}", port, e.getMessage());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
    }

    /** One line per member: role, term, leader, applied index, counter value. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        for (Member m : members) {
            sb.append("\n  member ").append(m.index).append(' ').append(m.id);
            if (m.node == null) {
                sb.append(" down");
            } else {
                var s = m.node.status();
                sb.append(' ').append(s.role()).append(" term=").append(s.term()).append(" leader=").append(s.leader())
                        .append(" commit=").append(s.commitIndex()).append(" applied=").append(m.counter.appliedIndex())
                        .append(" value=").append(m.counter.value()).append(m.transportUp ? "" : " (transport killed)");
            }
        }
        return sb.toString();
    }

    /** Polls {@code condition} until it holds or {@code timeoutMs} passes (then fails with the message). */
    static void await(BooleanSupplier condition, long timeoutMs, Supplier<String> failure) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(failure.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /**
     * Shuts every node down first (so no survivor campaigns while the others go), then closes the
     * transports, the storage, the runtime and the wheel.
     */
    @Override
    public void close() throws InterruptedException {
        List<Throwable> failures = new ArrayList<>();
        for (Member m : members) {
            try {
                if (m.service != null && !m.service.shutdown(SHUTDOWN_WAIT_MS)) {
                    failures.add(new AssertionError("member " + m.index + " did not shut down within " + SHUTDOWN_WAIT_MS + " ms"));
                }
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        for (Member m : members) {
            try {
                if (m.transport != null) {
                    m.transport.close();
                    m.transportUp = false;
                }
                m.service = null;
                m.node = null;
                stopNodeAndStorage(m);
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        runtime.close();
        timer.stop();
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("closing the cluster failed: " + failures);
            failures.forEach(e::addSuppressed);
            throw e;
        }
    }
}
