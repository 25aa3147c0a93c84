package io.wheelraft.storage;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.sim.SimCluster;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two data members and a witness (n3) on the durable storage (RocksDB log, file meta, local
 * snapshots), in the deterministic simulated cluster: the witness's RocksDB log holds entry
 * headers without payloads, its snapshots (its own, and the one a leader installs on it) hold no
 * file, it restarts from them, and either data member can be killed while writes go on.
 */
class RocksDbWitnessSimClusterTest {

    private static final int T = 300;
    private static final long WAIT_MS = 20L * T;
    private static final int WITNESS = 2;

    @TempDir
    Path dir;

    private RocksDbSimClusterTest.DurableStorages storages;
    private final Map<Integer, SimCluster.NodeStorage> opened = new HashMap<>();

    @AfterEach
    void closeStorage() {
        if (storages != null) {
            storages.closeAll();
        }
    }

    @Test
    void witnessKeepsHeadersAndMetadataOnlySnapshotsOnDisk() throws IOException {
        storages = new RocksDbSimClusterTest.DurableStorages(dir);
        SimCluster c = new SimCluster(77, 3, 3, Set.of(WITNESS), i -> i == WITNESS ? null : new SumFsm(),
                o -> o.electionTimeoutMs(T).snapshotLogMargin(2), (member, incarnation) -> {
                    SimCluster.NodeStorage s = storages.open(member, incarnation);
                    opened.put(member, s);
                    return s;
                });
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader; " + c.replayHint());
        write(c, 20);
        assertHeadersOnly(opened.get(WITNESS).log());

        // The witness misses writes and a compaction: the leader installs a metadata-only snapshot.
        crash(c, WITNESS);
        write(c, 30);
        for (int i = 0; i < 2; i++) {
            snapshot(c, i);
        }
        c.runFor(20);
        c.restart(WITNESS);
        write(c, 5);
        awaitApplied(c, WITNESS);
        try (SnapshotReader r = opened.get(WITNESS).snapshots().open()) {
            assertTrue(r != null && r.meta().getFilesCount() == 0, "the witness's snapshot holds files: " + (r == null ? null : r.meta()));
            assertTrue(r.meta().getLastIncludedIndex() > 20);
        }
        snapshot(c, WITNESS);
        crash(c, WITNESS);
        c.restart(WITNESS);
        write(c, 5);
        awaitApplied(c, WITNESS);
        assertHeadersOnly(opened.get(WITNESS).log());

        // Either data member may die: the other and the witness carry on.
        for (int victim = 0; victim < 2; victim++) {
            crash(c, victim);
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, WAIT_MS), "no leader without member " + victim + "; " + c.replayHint());
            write(c, 10);
            c.restart(victim);
            write(c, 1);
            awaitApplied(c, victim);
        }
        assertEquals(((SumFsm) c.stateMachine(0)).sum, ((SumFsm) c.stateMachine(1)).sum);
        assertEquals(82, ((SumFsm) c.stateMachine(0)).sum, "every acknowledged write applied once");
    }

    private void crash(SimCluster c, int member) {
        c.crash(member, true);
        storages.release(member);
    }

    private static void assertHeadersOnly(LogStorage log) {
        int data = 0;
        for (long i = log.firstLogIndex(); i <= log.lastLogIndex(); i++) {
            LogEntry e = log.entry(i);
            if (e.getType() == EntryType.ENTRY_TYPE_DATA) {
                data++;
                assertTrue(e.getData().isEmpty(), "the witness stored a payload at " + i);
            }
        }
        assertTrue(data > 0, "no data entry in the witness's log " + log.firstLogIndex() + ".." + log.lastLogIndex());
    }

    private static void snapshot(SimCluster c, int i) {
        Status[] s = new Status[1];
        c.node(i).snapshot(st -> s[0] = st);
        assertTrue(c.runUntil(() -> s[0] != null, WAIT_MS) && s[0].isOk(), "snapshot of member " + i + ": " + s[0]);
    }

    /** Member {@code i} applied everything the leader applied. */
    private static void awaitApplied(SimCluster c, int i) {
        long target = c.node(c.leaderIndex()).status().appliedIndex();
        assertTrue(c.runUntil(() -> c.node(i).status().appliedIndex() >= target, WAIT_MS),
                "member " + i + " did not apply through " + target + "; " + c.replayHint());
    }

    /** Commits {@code n} writes of 1 (each with a 1 KB payload) through the leader. */
    private static void write(SimCluster c, int n) {
        int[] ok = new int[1];
        boolean[] inFlight = new boolean[1];
        assertTrue(c.runUntil(() -> {
            int l = c.leaderIndex();
            if (!inFlight[0] && l >= 0 && ok[0] < n) {
                inFlight[0] = true;
                c.node(l).apply(new Task(ByteBuffer.allocate(1024).putLong(0, 1), s -> {
                    inFlight[0] = false;
                    if (s.isOk()) {
                        ok[0]++;
                    }
                }));
            }
            return ok[0] >= n;
        }, 3 * WAIT_MS), "only " + ok[0] + " of " + n + " writes committed; " + c.replayHint());
    }

    /** Sums the first 8 bytes of each entry; its snapshot is one file holding the sum. */
    private static final class SumFsm extends StateMachineAdapter {
        long sum;

        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                sum += it.next().getLong(0);
                Closure done = it.done();
                if (done != null) {
                    done.run(Status.ok());
                }
            }
        }

        @Override
        public void onSnapshotSave(SnapshotWriter writer, Closure done) {
            try (OutputStream out = writer.addFile("sum")) {
                out.write(ByteBuffer.allocate(8).putLong(0, sum).array());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            done.run(Status.ok());
        }

        @Override
        public boolean onSnapshotLoad(SnapshotReader reader) {
            try (var in = reader.openFile("sum")) {
                sum = ByteBuffer.wrap(in.readAllBytes()).getLong(0);
                return true;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
