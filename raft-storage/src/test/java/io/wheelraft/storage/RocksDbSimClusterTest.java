package io.wheelraft.storage;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.sim.SimCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deterministic simulated three-node cluster (manual clock, simulated network) whose members
 * keep their log in {@link RocksDbStore}, term and vote in {@link FileMetaStorage} and snapshots
 * in {@link LocalSnapshotStorage}, each in its own directory. Every member is crashed and
 * restarted in turn while clients keep writing, then all of them at once; every acknowledged
 * increment must be applied on every node and the nodes must converge.
 *
 * <p>A crash closes the member's storage (a process cannot lose its RocksDB lock inside one JVM
 * any other way); loss of unsynced writes is covered by {@link CrashRecoveryTest}'s real SIGKILL.
 */
class RocksDbSimClusterTest {

    private static final long SEED = 20240611L;
    private static final int ELECTION_TIMEOUT_MS = 300;
    private static final long WAIT_MS = 20L * ELECTION_TIMEOUT_MS;

    @TempDir
    Path dir;

    private DurableStorages storages;

    @AfterEach
    void closeStorage() {
        if (storages != null) {
            storages.closeAll();
        }
    }

    @Test
    void everyAcknowledgedIncrementSurvivesRestartsOfEveryNode() {
        storages = new DurableStorages(dir);
        SimCluster c = new SimCluster(SEED, 3, i -> new OpLogFsm(i), o -> o.electionTimeoutMs(ELECTION_TIMEOUT_MS), storages);
        Writes writes = new Writes(c);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader; " + c.replayHint());
        writes.writeAll(30);

        for (int victim = 0; victim < c.size(); victim++) {
            NodeStatus before = c.node(victim).status();
            crash(c, victim);
            // The other two are a quorum: writing goes on (after a new election if the victim led).
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader without member " + victim + "; " + c.replayHint());
            writes.writeAll(25);
            c.restart(victim);
            NodeStatus recovered = c.node(victim).status();
            assertTrue(recovered.lastLogIndex() >= before.lastLogIndex(),
                    "member " + victim + " reopened its log at " + recovered.lastLogIndex() + ", had " + before.lastLogIndex());
            assertTrue(recovered.term() >= before.term(), "member " + victim + " reopened term " + recovered.term() + ", had " + before.term());
            writes.writeAll(25);
            writes.awaitConvergence();
        }

        for (int i = 0; i < c.size(); i++) {
            crash(c, i);
        }
        for (int i = 0; i < c.size(); i++) {
            c.restart(i);
        }
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader after restarting every node; " + c.replayHint());
        writes.writeAll(20);
        writes.awaitConvergence();
        writes.assertEveryAcknowledgedOpAppliedOnceEverywhere();
        assertEquals(3 + 3 + 3, storages.opens(), "each member opened its storage at start and on each of its two restarts");
    }

    /** The member's process dies: its node stops at once and its storage is released. */
    private void crash(SimCluster c, int member) {
        c.crash(member, true);
        storages.release(member);
    }

    /** Opens each member's durable storage under its own directory, closing the previous incarnation first. */
    static final class DurableStorages implements SimCluster.StorageFactory {
        private record Opened(RocksDbStore store, FileMetaStorage meta, LocalSnapshotStorage snapshots) {
            void close() {
                store.close(); // also closes the group's log storage
                meta.close();
                snapshots.close();
            }
        }

        private final Path root;
        private final Map<Integer, Opened> open = new HashMap<>();
        private int opens;

        DurableStorages(Path root) {
            this.root = root;
        }

        @Override
        public SimCluster.NodeStorage open(int member, int incarnation) {
            release(member);
            Path d = root.resolve("member-" + member);
            RocksDbStore store = RocksDbStore.open(d.resolve("log"));
            FileMetaStorage meta = FileMetaStorage.open(d.resolve(SimCluster.GROUP + "/meta"));
            LocalSnapshotStorage snapshots = LocalSnapshotStorage.open(d.resolve(SimCluster.GROUP + "/snapshot"));
            open.put(member, new Opened(store, meta, snapshots));
            opens++;
            return new SimCluster.NodeStorage(store.logStorage(SimCluster.GROUP), meta, snapshots);
        }

        void release(int member) {
            Opened o = open.remove(member);
            if (o != null) {
                o.close();
            }
        }

        int opens() {
            return opens;
        }

        void closeAll() {
            for (Integer member : new ArrayList<>(open.keySet())) {
                release(member);
            }
        }
    }

    /**
     * Records the unique operation ids it applies, in order: lets the test check that every
     * acknowledged increment is applied exactly once on every node and that nodes agree.
     */
    private static final class OpLogFsm extends StateMachineAdapter {
        private final int member;
        final List<Long> applied = new ArrayList<>();
        long lastIndex;

        OpLogFsm(int member) {
            this.member = member;
        }

        static ByteBuffer op(long id) {
            return ByteBuffer.allocate(8).putLong(0, id);
        }

        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                ByteBuffer data = it.next();
                if (it.index() <= lastIndex) {
                    throw new AssertionError("member " + member + " applied index " + it.index() + " after " + lastIndex);
                }
                lastIndex = it.index();
                applied.add(data.getLong(data.position()));
                Closure done = it.done();
                if (done != null) {
                    done.run(Status.ok());
                }
            }
        }
    }

    /** Writes increments with unique ids through the leader and remembers which were acknowledged. */
    private static final class Writes {
        private final SimCluster c;
        private final Set<Long> acknowledged = new HashSet<>();
        private long nextId = 1;

        Writes(SimCluster c) {
            this.c = c;
        }

        /** Proposes {@code n} increments to the current leader and waits until each is acknowledged. */
        void writeAll(int n) {
            int leader = c.leaderIndex();
            assertTrue(leader >= 0, "no leader to write to; " + c.replayHint());
            List<Status> outcomes = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                long id = nextId++;
                c.node(leader).apply(new Task(OpLogFsm.op(id), status -> {
                    outcomes.add(status);
                    if (status.isOk()) {
                        acknowledged.add(id);
                    }
                }));
            }
            assertTrue(c.runUntil(() -> outcomes.size() == n, WAIT_MS), "only " + outcomes.size() + " of " + n + " writes answered; " + c.replayHint());
            for (Status s : outcomes) {
                assertTrue(s.isOk(), "write failed without faults in flight: " + s + "; " + c.replayHint());
            }
        }

        /** Commits one more write and waits until every member has applied through it. */
        void awaitConvergence() {
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader; " + c.replayHint());
            writeAll(1);
            long target = fsm(c.leaderIndex()).lastIndex;
            assertTrue(c.runUntil(() -> {
                for (int i = 0; i < c.size(); i++) {
                    if (fsm(i).lastIndex < target) {
                        return false;
                    }
                }
                return true;
            }, WAIT_MS), "members did not all apply through " + target + "; " + c.replayHint());
            List<Long> reference = fsm(0).applied;
            for (int i = 1; i < c.size(); i++) {
                assertEquals(reference, fsm(i).applied.subList(0, Math.min(reference.size(), fsm(i).applied.size())),
                        "member " + i + " applied a different sequence than member 0; " + c.replayHint());
            }
        }

        void assertEveryAcknowledgedOpAppliedOnceEverywhere() {
            for (int i = 0; i < c.size(); i++) {
                List<Long> applied = fsm(i).applied;
                Set<Long> distinct = new HashSet<>(applied);
                assertEquals(applied.size(), distinct.size(), "member " + i + " applied an operation twice; " + c.replayHint());
                for (long id : acknowledged) {
                    assertTrue(distinct.contains(id), "member " + i + " lost acknowledged operation " + id + "; " + c.replayHint());
                }
            }
        }

        private OpLogFsm fsm(int i) {
            return (OpLogFsm) c.stateMachine(i);
        }
    }
}
