package io.wheelraft.core.sim;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.SnapshotMeta;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Witness replicas in the simulated cluster, one rule per test: two data members (n1, n2) and a
 * witness (n3) that stores entry headers only, votes and acknowledges, and never leads (see
 * docs/divergence.md, "Witnesses"). The witness runs without a state machine of its own.
 */
class WitnessSimulationTest {

    private static final int T = 150;
    private static final int WITNESS = 2;

    private static SimCluster cluster(long seed, Consumer<NodeOptions> tuning) {
        return cluster(seed, 3, 3, tuning);
    }

    /** {@code size} members, the first {@code initialVoters} in the group; member 2 (n3) is the witness. */
    private static SimCluster cluster(long seed, int size, int initialVoters, Consumer<NodeOptions> tuning) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        return new SimCluster(seed, size, initialVoters, Set.of(WITNESS), i -> i == WITNESS ? null : new CounterFsm(i, committed),
                o -> tuning.accept(o.electionTimeoutMs(T)), null);
    }

    private static CounterFsm fsm(SimCluster c, int i) {
        return (CounterFsm) c.stateMachine(i);
    }

    private static void awaitLeader(SimCluster c) {
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 30L * T), "no leader; " + c.replayHint());
    }

    /** Commits {@code n} increments of 1 through whoever leads, retrying what fails. */
    private static void write(SimCluster c, int n) {
        int[] done = new int[1];
        boolean[] inFlight = new boolean[1];
        assertTrue(c.runUntil(() -> {
            int l = c.leaderIndex();
            if (!inFlight[0] && l >= 0 && done[0] < n) {
                inFlight[0] = true;
                c.node(l).apply(new Task(CounterFsm.delta(1), s -> {
                    inFlight[0] = false;
                    if (s.isOk()) {
                        done[0]++;
                    }
                }));
            }
            return done[0] >= n;
        }, 60L * T), "only " + done[0] + " of " + n + " writes committed; " + c.replayHint());
    }

    /** Proposes one increment on the leader and reports whether it committed within {@code ms}. */
    private static boolean commitsWithin(SimCluster c, long ms) {
        int l = c.leaderIndex();
        if (l < 0) {
            c.runFor(ms);
            return false;
        }
        Status[] result = new Status[1];
        c.node(l).apply(new Task(CounterFsm.delta(1), s -> result[0] = s));
        c.runUntil(() -> result[0] != null, ms);
        return result[0] != null && result[0].isOk();
    }

    private static void assertNoPayloads(SimCluster c, int i) {
        var log = c.logStorage(i);
        int data = 0;
        for (long k = log.firstLogIndex(); k <= log.lastLogIndex(); k++) {
            LogEntry e = log.entry(k);
            if (e.getType() == EntryType.ENTRY_TYPE_DATA) {
                data++;
                assertTrue(e.getData().isEmpty(), "the witness stored a payload at index " + k + "; " + c.replayHint());
            }
        }
        assertTrue(data > 0, "the witness's log holds no data entries at all; " + c.replayHint());
    }

    /** Every data member applied the leader's value; the witness's log reached the leader's commit point. */
    private static void assertConverged(SimCluster c) {
        awaitLeader(c);
        int leader = c.leaderIndex();
        long target = fsm(c, leader).lastAppliedIndex();
        assertTrue(c.runUntil(() -> fsm(c, 0).lastAppliedIndex() >= target && fsm(c, 1).lastAppliedIndex() >= target
                && c.node(WITNESS).status().appliedIndex() >= target, 40L * T), "nodes did not converge to " + target + "; " + c.replayHint());
        assertEquals(fsm(c, 0).value(), fsm(c, 1).value(), "the data members diverged; " + c.replayHint());
    }

    @Test
    void witnessNeverLeadsNorCampaignsAcrossSeeds() {
        for (long seed = 1; seed <= 30; seed++) {
            SimCluster c = cluster(seed, o -> { });
            Random r = new Random(seed);
            for (int t = 0; t < 3_000; t++) {
                if (t % 150 == 0) {
                    switch (r.nextInt(5)) {
                        case 0 -> c.crash(r.nextInt(2), r.nextBoolean()); // a data member dies
                        case 1 -> c.partition(List.of(r.nextInt(3)), List.of());
                        case 2 -> c.faults().dropRate(0.1);
                        default -> {
                            c.heal();
                            c.faults().dropRate(0);
                            c.restart(0);
                            c.restart(1);
                        }
                    }
                }
                c.runFor(1);
                Role role = c.node(WITNESS).status().role();
                assertNotEquals(Role.LEADER, role, "the witness leads; " + c.replayHint());
                assertNotEquals(Role.CANDIDATE, role, "the witness campaigns; " + c.replayHint());
            }
            assertEquals(0, c.network().voteRequestsSentBy(c.peer(WITNESS).endpoint()), "the witness asked for votes; " + c.replayHint());
            assertTrue(c.leaderTerms() > 0, "no leader at all; " + c.replayHint());
        }
    }

    @Test
    void witnessStoresHeadersOnlyAndTheDataMembersTheWholeEntries() {
        SimCluster c = cluster(3, o -> { });
        awaitLeader(c);
        write(c, 30);
        assertConverged(c);
        assertNoPayloads(c, WITNESS);
        for (int i = 0; i < 2; i++) {
            var log = c.logStorage(i);
            for (long k = log.firstLogIndex(); k <= log.lastLogIndex(); k++) {
                LogEntry e = log.entry(k);
                if (e.getType() == EntryType.ENTRY_TYPE_DATA) {
                    assertEquals(8, e.getData().size(), "data member " + i + " lacks the payload at " + k);
                }
            }
            assertEquals(c.logStorage(i).lastLogIndex(), c.logStorage(WITNESS).lastLogIndex(), "the witness holds every header");
        }
        assertEquals(30, fsm(c, 0).value());
    }

    @Test
    void writesContinueWhenEitherDataMemberIsDown() {
        for (int victim = 0; victim < 2; victim++) {
            SimCluster c = cluster(10 + victim, o -> { });
            awaitLeader(c);
            write(c, 10);
            c.crash(victim, true);
            // The other data member and the witness form a majority: they elect (if needed) and commit.
            write(c, 20);
            int survivor = 1 - victim;
            assertEquals(survivor, c.leaderIndex(), "only the surviving data member may lead; " + c.replayHint());
            assertTrue(c.runUntil(() -> fsm(c, survivor).value() == 30, 10L * T), "survivor value " + fsm(c, survivor).value());
            c.restart(victim);
            assertConverged(c);
            assertEquals(30, fsm(c, victim).value(), "the restarted member caught up; " + c.replayHint());
        }
    }

    /**
     * The only data member holding the newest committed entries is down: the witness's headers
     * are newer than the other data member's log, so it refuses to elect it, and the cluster
     * stalls instead of losing those entries. When the up-to-date member returns, writes go on
     * and nothing committed is lost.
     */
    @Test
    void clusterStallsRatherThanLoseEntriesWhenTheOnlyUpToDateDataMemberIsDown() {
        SimCluster c = cluster(7, o -> { });
        awaitLeader(c);
        write(c, 5);
        int leader = c.leaderIndex();
        int stale = 1 - leader;
        c.partition(List.of(leader, WITNESS), List.of(stale));
        write(c, 20); // committed on the leader and the witness only
        assertEquals(25, fsm(c, leader).value());
        assertTrue(fsm(c, stale).value() < 25);
        c.crash(leader, true);
        c.heal();
        c.runFor(20L * T);
        assertEquals(-1, c.leaderIndex(), "a leader was elected without the committed entries; " + c.replayHint());
        assertFalse(commitsWithin(c, 10L * T), "nothing may commit while the up-to-date data member is down");
        assertEquals(Role.FOLLOWER, c.node(WITNESS).status().role());
        c.restart(leader);
        awaitLeader(c);
        assertEquals(leader, c.leaderIndex(), "only the up-to-date data member can win the witness's vote; " + c.replayHint());
        write(c, 5);
        assertConverged(c);
        assertEquals(30, fsm(c, stale).value(), "the stale member caught up without losing a committed entry");
        assertEquals(30, fsm(c, leader).value());
    }

    @Test
    void leadershipTransferToTheWitnessIsRefused() {
        SimCluster c = cluster(4, o -> { });
        awaitLeader(c);
        int leader = c.leaderIndex();
        Status[] result = new Status[1];
        c.node(leader).transferLeadershipTo(c.peer(WITNESS), s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 5L * T));
        assertEquals(RaftError.INVALID_ARGUMENT, result[0].code(), result[0].toString());
        assertTrue(result[0].message().contains("witness"), result[0].message());
        c.runFor(5L * T);
        assertEquals(leader, c.leaderIndex(), "the leader keeps leading");
    }

    @Test
    void readIndexOnTheWitnessFailsWithoutForwarding() {
        SimCluster c = cluster(5, o -> { });
        awaitLeader(c);
        write(c, 3);
        Status[] result = new Status[1];
        long[] index = new long[1];
        c.node(WITNESS).readIndex((s, i) -> {
            result[0] = s;
            index[0] = i;
        });
        assertTrue(c.runUntil(() -> result[0] != null, 5L * T));
        assertEquals(RaftError.INVALID_ARGUMENT, result[0].code(), result[0].toString());
        assertTrue(result[0].message().contains("witness") && result[0].message().contains("serves no reads"), result[0].message());
        assertEquals(-1, index[0]);
    }

    @Test
    void witnessAddedAtRunTimeTakesOverTheThirdVote() {
        SimCluster c = cluster(6, 3, 2, o -> { }); // n1, n2 form the group; n3 starts empty as a witness
        awaitLeader(c);
        write(c, 10);
        Status[] added = new Status[1];
        c.node(c.leaderIndex()).addWitness(c.peer(WITNESS), s -> added[0] = s);
        assertTrue(c.runUntil(() -> added[0] != null, 40L * T), "addWitness never finished; " + c.replayHint());
        assertTrue(added[0].isOk(), added[0].toString());
        Configuration conf = c.node(c.leaderIndex()).status().configuration();
        assertTrue(conf.contains(c.peer(WITNESS)) && conf.isWitness(c.peer(WITNESS)), "configuration " + conf);
        write(c, 10);
        assertConverged(c);
        assertNoPayloads(c, WITNESS);
        // Without the witness two data members need each other; with it either may fail.
        int follower = 1 - c.leaderIndex();
        c.crash(c.leaderIndex(), true);
        write(c, 5);
        assertEquals(follower, c.leaderIndex());
        assertEquals(25, fsm(c, follower).value());
    }

    /**
     * A witness left behind a compacted log gets the leader's snapshot as metadata only (no state
     * file) and compacts its own log from it; its own snapshots are metadata only too.
     */
    @Test
    void witnessInstallsAndTakesMetadataOnlySnapshots() {
        SimCluster c = cluster(8, o -> o.snapshotLogMargin(2));
        awaitLeader(c);
        write(c, 10);
        int leader = c.leaderIndex();
        c.partition(List.of(0, 1), List.of(WITNESS));
        write(c, 40);
        for (int i = 0; i < 2; i++) {
            int n = i;
            Status[] s = new Status[1];
            c.node(n).snapshot(st -> s[0] = st);
            assertTrue(c.runUntil(() -> s[0] != null, 10L * T) && s[0].isOk(), "snapshot of node " + n);
        }
        c.runFor(10);
        long witnessLast = c.logStorage(WITNESS).lastLogIndex();
        assertTrue(c.logStorage(leader).firstLogIndex() > witnessLast + 1, "the leader still holds the witness's next entry");
        SnapshotMeta leaderMeta = latestSnapshot(c, leader);
        assertFalse(leaderMeta.getFilesList().isEmpty(), "a data member's snapshot holds its state file");
        c.heal();
        assertConverged(c);
        SnapshotMeta installed = latestSnapshot(c, WITNESS);
        assertNotNull(installed, "the witness never received a snapshot");
        assertTrue(installed.getFilesList().isEmpty(), "the witness received snapshot files: " + installed.getFilesList());
        assertTrue(installed.getConfiguration().getWitnessesList().contains(c.peer(WITNESS).toString()), installed.toString());
        c.runUntil(() -> c.logStorage(WITNESS).firstLogIndex() > witnessLast, 5L * T); // the reset runs on the disk lane
        assertTrue(c.logStorage(WITNESS).firstLogIndex() > witnessLast, "the witness's log restarts after the snapshot: first "
                + c.logStorage(WITNESS).firstLogIndex() + ", last before " + witnessLast + ", snapshot " + installed.getLastIncludedIndex());
        // Its own snapshot: metadata only, and its log is compacted from it.
        write(c, 10);
        assertConverged(c);
        Status[] s = new Status[1];
        c.node(WITNESS).snapshot(st -> s[0] = st);
        assertTrue(c.runUntil(() -> s[0] != null, 10L * T) && s[0].isOk(), "the witness's snapshot: " + s[0]);
        c.runFor(10);
        SnapshotMeta own = latestSnapshot(c, WITNESS);
        assertTrue(own.getLastIncludedIndex() > installed.getLastIncludedIndex());
        assertTrue(own.getFilesList().isEmpty(), "the witness's own snapshot holds files: " + own.getFilesList());
        assertEquals(own.getLastIncludedIndex() - 1, c.logStorage(WITNESS).firstLogIndex(), "compacted to the margin of 2");
        // A restart recovers from that snapshot without a state machine.
        c.crash(WITNESS, true);
        c.restart(WITNESS);
        write(c, 5);
        assertConverged(c);
        assertEquals(65, fsm(c, 0).value());
    }

    private static SnapshotMeta latestSnapshot(SimCluster c, int i) {
        try (SnapshotReader r = c.snapshotStorage(i).open()) {
            return r == null ? null : r.meta();
        }
    }

    @Test
    void witnessListedAsADataMemberStopsAtStart() {
        // No member is marked as a witness, but the third one to start (n3) runs as one.
        int[] started = {0};
        SimCluster c = new SimCluster(9, 3, 3, Set.of(), i -> i == WITNESS ? null : new CounterFsm(i, new CommittedLog("seed 9")),
                o -> o.electionTimeoutMs(T).witness(started[0]++ == WITNESS), null);
        assertEquals(Role.ERROR, c.node(WITNESS).status().role(), "a witness listed as a data member must not start");
        awaitLeader(c); // the two data members still form a majority of three
        write(c, 3);
        assertEquals(Role.ERROR, c.node(WITNESS).status().role());
    }

    @Test
    void dataMemberMarkedAsWitnessStopsAtStart() {
        SimCluster c = new SimCluster(11, 3, 3, Set.of(WITNESS), i -> new CounterFsm(i, new CommittedLog("seed 11")),
                o -> o.electionTimeoutMs(T).witness(false), null); // n3 is marked a witness but runs as a data node
        assertEquals(Role.ERROR, c.node(WITNESS).status().role(), "a data node marked as a witness must not start");
        awaitLeader(c);
        write(c, 3);
    }

    @Test
    void switchingAMemberBetweenDataAndWitnessInPlaceIsRefused() {
        SimCluster c = cluster(12, o -> { });
        awaitLeader(c);
        int leader = c.leaderIndex();
        Configuration conf = c.node(leader).status().configuration();
        int data = 1 - leader;
        Configuration dataToWitness = conf.withMembers(conf.peers(), conf.learners()).withWitness(c.peer(data));
        Configuration witnessToData = new Configuration(conf.peers());
        for (Configuration target : List.of(dataToWitness, witnessToData)) {
            Status[] result = new Status[1];
            c.node(leader).changePeers(target, s -> result[0] = s);
            assertTrue(c.runUntil(() -> result[0] != null, 10L * T));
            assertEquals(RaftError.INVALID_ARGUMENT, result[0].code(), target + ": " + result[0]);
            assertTrue(result[0].message().contains("in place"), result[0].message());
        }
        assertEquals(conf, c.node(leader).status().configuration());
        write(c, 3);
        for (int i = 0; i < 3; i++) {
            assertNotEquals(Role.ERROR, c.node(i).status().role(), "node " + i);
        }
    }
}
