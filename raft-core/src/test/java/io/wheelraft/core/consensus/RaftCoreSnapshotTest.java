package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.data;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Snapshots in the pure core (Raft §7): compaction, the leader asking for a transfer, and installing on a follower. */
class RaftCoreSnapshotTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final long T0 = ELECTION_TIMEOUT_MS;

    private static List<AppendEntriesRequest> appendsTo(CoreNode leader, PeerId to) {
        return leader.fx.takeOutbox().stream().filter(s -> s.isAppend() && s.to().equals(to)).map(RecordingEffects.Send::append).toList();
    }

    /** A leader of term 2 whose log 1..10 (term 1) plus its no-op at 11 is committed and compacted up to 8. */
    private static CoreNode compactedLeader() {
        CoreNode l = CoreNode.create(N1, peers(3), 1, new long[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0);
        l.electByHand(T0);
        l.flushDisk();
        assertEquals(9, l.core.onSnapshotSaved(10, 2), "keeps two entries behind the snapshot");
        l.fx.takeOutbox();
        return l;
    }

    @Test
    void leaderAsksForASnapshotWhenAFollowersNextEntryWasCompacted() {
        CoreNode l = compactedLeader();
        AppendEntriesResponse behind = AppendEntriesResponse.newBuilder().setTerm(2).setSuccess(false)
                .setLastLogIndex(3).setConflictIndex(4).build();
        AppendEntriesRequest probe = AppendEntriesRequest.newBuilder().setTerm(2).setServerId(N1.toString())
                .setPrevLogIndex(11).setPrevLogTerm(2).build();
        l.core.handleAppendEntriesResponse(N2, probe, behind, T0 + 1);
        assertTrue(l.fx.events().contains(new RecordingEffects.SnapshotWanted(N2)), l.fx.events().toString());
        assertTrue(appendsTo(l, N2).isEmpty(), "no appends while the snapshot is on its way");

        l.core.onHeartbeatTimeout(T0 + 2);
        assertEquals(1, appendsTo(l, N2).size(), "heartbeats go on during a transfer (check-quorum)");

        l.core.onSnapshotSent(N2, 2, 10, true, T0 + 3);
        assertEquals(10, l.core.followerMatchIndexes().get(N2));
        List<AppendEntriesRequest> next = appendsTo(l, N2);
        assertEquals(1, next.size());
        assertEquals(10, next.get(0).getPrevLogIndex(), "replication resumes right after the snapshot");
        assertEquals(11, next.get(0).getEntries(0).getIndex());
    }

    @Test
    void aFailedTransferIsRetriedWhenTheFollowerAnswersAHeartbeat() {
        CoreNode l = compactedLeader();
        AppendEntriesResponse behind = AppendEntriesResponse.newBuilder().setTerm(2).setSuccess(false).setConflictIndex(4).build();
        AppendEntriesRequest probe = AppendEntriesRequest.newBuilder().setTerm(2).setPrevLogIndex(11).setPrevLogTerm(2).build();
        l.core.handleAppendEntriesResponse(N2, probe, behind, T0 + 1);
        l.core.onSnapshotSent(N2, 2, 10, false, T0 + 2);
        long wanted = l.fx.events().stream().filter(e -> e.equals(new RecordingEffects.SnapshotWanted(N2))).count();
        assertEquals(1, wanted, "no immediate resend to a follower that just failed");
        AppendEntriesRequest hb = AppendEntriesRequest.newBuilder().setTerm(2).setHeartbeat(true).setSequence(1).build();
        l.core.handleAppendEntriesResponse(N2, hb, AppendEntriesResponse.newBuilder().setTerm(2).setSuccess(true).build(), T0 + 3);
        wanted = l.fx.events().stream().filter(e -> e.equals(new RecordingEffects.SnapshotWanted(N2))).count();
        assertEquals(2, wanted, "a heartbeat answer shows the follower is back: try again");
    }

    @Test
    void followerInstallingASnapshotDropsADisagreeingLogAndTakesItsMembership() {
        CoreNode f = CoreNode.create(N2, peers(3), 2, new long[] {1, 1, 2, 2}, 0);
        assertTrue(f.core.acceptSnapshotChunk(N1, 3, 10));
        assertEquals(N1, f.core.leader());
        Membership snapshotMembers = new Membership(new Configuration(List.of(N1, N2, peer(3), peer(4))), null, 20);
        assertTrue(f.core.installSnapshot(20, 3, snapshotMembers, 11), "entry 20 is not held: the log must go");
        assertEquals(20, f.core.commitIndex());
        assertEquals(20, f.log.lastIndex());
        assertEquals(3, f.log.lastTerm());
        assertEquals(4, f.core.membership().current().peers().size());
        assertTrue(f.core.holds(20));
        // Nothing was known committed here: every dropped entry may differ from the snapshot's,
        // so whatever vouched for them (a held acknowledgement) is discarded from index 1.
        assertTrue(f.fx.events().contains(new RecordingEffects.Discarded(1)), f.fx.events().toString());
        // The leader continues right after the snapshot.
        AppendEntriesRequest next = AppendEntriesRequest.newBuilder().setTerm(3).setServerId(N1.toString())
                .setPrevLogIndex(20).setPrevLogTerm(3).setCommittedIndex(21).addEntries(data(21, 3, "x")).build();
        assertTrue(f.core.handleAppendEntries(next, 12).response().getSuccess());
    }

    @Test
    void staleTermSnapshotIsRefusedAndALeaderNeverInstallsOne() {
        CoreNode f = CoreNode.create(N2, peers(3), 5, new long[] {1}, 0);
        assertFalse(f.core.acceptSnapshotChunk(N1, 4, 10));
        assertEquals(Role.FOLLOWER, f.core.role());
        CoreNode l = compactedLeader();
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> l.core.installSnapshot(30, 2, l.core.membership(), T0));
    }
}
