package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Storage faults in the pure core: a node fenced after a storage fault (role REPAIRING) neither
 * votes nor campaigns and is repaired only by a leader's {@code repair_complete} once its log is
 * durable through the leader's target; the leader lowers the match of a follower whose log
 * shrank, does not count a repairing follower towards commitment and refuses to transfer
 * leadership to it; a term or vote that cannot be written is never used.
 */
class RaftCoreRepairTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long T0 = ELECTION_TIMEOUT_MS;
    private static final long LATER = 10 * T0;

    private static CoreNode fenced(PeerId self, long term, long... logTerms) {
        return CoreNode.create(CoreNode.config(self, 4, 64), peers(3), term, logTerms, true, 0);
    }

    private static RequestVoteRequest voteRequest(PeerId candidate, long term, long lastIndex, long lastTerm, boolean preVote) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term)
                .setLastLogIndex(lastIndex).setLastLogTerm(lastTerm).setPreVote(preVote).build();
    }

    private static AppendEntriesRequest append(PeerId leader, long term, long prev, long prevTerm, boolean repairComplete, LogEntry... entries) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(leader.toString()).setTerm(term)
                .setPrevLogIndex(prev).setPrevLogTerm(prevTerm).addAllEntries(List.of(entries)).setRepairComplete(repairComplete).build();
    }

    /** Delivers every append in the leader's outbox for {@code follower} and returns the last answer. */
    private static AppendEntriesResponse deliverAll(CoreNode leader, CoreNode follower, long nowMs) {
        AppendEntriesResponse last = null;
        for (RecordingEffects.Send s : leader.fx.takeOutbox()) {
            if (!s.isAppend() || !s.to().equals(follower.id)) {
                continue;
            }
            RaftCore.AppendResult r = follower.core.handleAppendEntries(s.append(), nowMs);
            follower.flushDisk();
            last = r.response();
            leader.core.handleAppendEntriesResponse(follower.id, s.append(), last, nowMs);
        }
        return last;
    }

    private static CoreNode leaderOf3() {
        CoreNode l = CoreNode.create(N1, peers(3), 0, new long[0], 0);
        l.electByHand(T0);
        l.flushDisk();
        return l;
    }

    // ------------------------------------------------------------ the fenced node

    @Test
    void fencedNodeGrantsNeitherVoteNorPreVote() {
        CoreNode n = fenced(N2, 1, 1, 1);
        assertEquals(Role.REPAIRING, n.core.role());
        for (boolean preVote : new boolean[] {true, false}) {
            RequestVoteResponse r = n.core.handleRequestVote(voteRequest(N3, 5, 10, 4, preVote), LATER);
            assertFalse(r.getGranted(), "a fenced node granted a " + (preVote ? "pre-vote" : "vote"));
            assertTrue(r.getReason().contains("repairing"), r.getReason());
        }
        assertEquals(1, n.core.term(), "a refused vote must not move the fenced node's term");
        assertNull(n.core.votedFor());
        assertTrue(n.fx.all(RecordingEffects.HardState.class).isEmpty());
    }

    @Test
    void fencedNodeNeverCampaignsAndIgnoresTimeoutNow() {
        CoreNode n = fenced(N1, 1, 1);
        n.core.handleAppendEntries(append(N2, 1, 1, 1, false), 0);
        assertEquals(N2, n.core.leader());
        n.core.onElectionTimeout(LATER);
        n.core.onElectionRetry(LATER);
        assertFalse(n.core.onConnectionLost(N2.endpoint(), LATER), "the broken-connection fast path must not arm");
        n.core.onConnectionLostGraceElapsed(2 * LATER);
        var answer = n.core.handleTimeoutNow(TimeoutNowRequest.newBuilder().setGroupId("g").setServerId(N2.toString())
                .setTerm(1).build(), 2 * LATER);
        assertFalse(answer.getSuccess(), "a fenced node must ignore TimeoutNow");
        assertTrue(n.fx.sends().isEmpty(), "a fenced node sent " + n.fx.sends());
        assertEquals(Role.REPAIRING, n.core.role());
        assertEquals(1, n.core.term());
    }

    @Test
    void repairCompletesOnlyWhenTheLogIsDurableThroughTheLeadersPoint() {
        CoreNode f = fenced(N2, 0);
        LogEntry e1 = CoreNode.data(1, 1, "a");
        AppendEntriesResponse r = f.core.handleAppendEntries(append(N1, 1, 0, 0, false, e1), 10).response();
        assertTrue(r.getSuccess() && r.getRepairing(), "a fenced follower takes entries and says it is repairing: " + r);

        // The leader's flag arrives before entry 1 is on disk: not repaired yet.
        r = f.core.handleAppendEntries(append(N1, 1, 1, 1, true), 20).response();
        assertTrue(r.getRepairing(), "repaired before its log was durable");
        assertEquals(Role.REPAIRING, f.core.role());

        f.flushDisk();
        r = f.core.handleAppendEntries(append(N1, 1, 1, 1, true), 30).response();
        assertFalse(r.getRepairing(), r.toString());
        assertEquals(Role.FOLLOWER, f.core.role());
        assertEquals(List.of(new RecordingEffects.RepairFlag(false)), f.fx.all(RecordingEffects.RepairFlag.class),
                "the flag must be cleared durably");

        RequestVoteResponse vote = f.core.handleRequestVote(voteRequest(N3, 2, 1, 1, false), LATER);
        assertTrue(vote.getGranted(), "a repaired node votes again: " + vote);
    }

    @Test
    void repairCompleteFromAnAppendThatDoesNotMatchIsIgnored() {
        CoreNode f = fenced(N2, 1, 1);
        AppendEntriesResponse r = f.core.handleAppendEntries(append(N1, 1, 5, 1, true), 10).response();
        assertFalse(r.getSuccess());
        assertTrue(r.getRepairing());
        assertEquals(Role.REPAIRING, f.core.role());
    }

    // ------------------------------------------------------------ the leader's side

    @Test
    void leaderLowersMatchOfAShrunkFollowerCatchesItUpAndCompletesTheRepair() {
        CoreNode l = leaderOf3();
        CoreNode f2 = CoreNode.create(N2, peers(3), 0, new long[0], 0);
        CoreNode f3 = CoreNode.create(N3, peers(3), 0, new long[0], 0);
        l.core.propose(l.commands(5), T0);
        l.flushDisk();
        for (int round = 0; round < 5 && !l.fx.outbox().isEmpty(); round++) {
            for (RecordingEffects.Send s : l.fx.takeOutbox()) {
                CoreNode f = s.to().equals(N2) ? f2 : f3;
                RaftCore.AppendResult r = f.core.handleAppendEntries(s.append(), T0);
                f.flushDisk();
                l.core.handleAppendEntriesResponse(s.to(), s.append(), r.response(), T0);
            }
        }
        assertEquals(6, l.core.commitIndex());
        assertEquals(6, l.core.followerMatchIndexes().get(N2));
        l.fx.takeOutbox();

        // N2 restarts with its WAL tail lost: entries 4..6 gone, fenced. Entry 7 is proposed
        // meanwhile; its first appends are lost.
        CoreNode damaged = fenced(N2, 1, 1, 1, 1);
        l.core.propose(l.commands(1), T0 + 5);
        l.flushDisk();
        l.fx.takeOutbox();
        l.core.onHeartbeatTimeout(T0 + 10);
        for (RecordingEffects.Send s : l.fx.takeOutbox()) {
            if (s.to().equals(N2)) {
                RaftCore.AppendResult r = damaged.core.handleAppendEntries(s.append(), T0 + 10);
                assertFalse(r.response().getSuccess());
                l.core.handleAppendEntriesResponse(N2, s.append(), r.response(), T0 + 10);
            }
        }
        assertEquals(3, l.core.followerMatchIndexes().get(N2), "match must drop to what the follower holds");
        List<RecordingEffects.Send> resend = l.fx.outbox().stream().filter(s -> s.isAppend() && s.to().equals(N2)).toList();
        assertEquals(3, resend.get(0).append().getPrevLogIndex(), "replication resumes after what it holds");

        // Entry 7, acknowledged only by the repairing follower, does not commit.
        for (int round = 0; round < 3; round++) {
            deliverAll(l, damaged, T0 + 20);
        }
        assertEquals(7, l.core.followerMatchIndexes().get(N2));
        assertEquals(6, l.core.commitIndex(), "the acknowledgement of a repairing follower was counted");
        assertEquals(Role.REPAIRING, damaged.core.role());

        // Its log now reaches the target (7, the leader's last index when it first said repairing).
        l.core.onHeartbeatTimeout(T0 + 30);
        deliverAll(l, damaged, T0 + 30);
        assertEquals(Role.FOLLOWER, damaged.core.role());
        assertEquals(7, l.core.commitIndex(), "once repaired its acknowledgement counts");
    }

    @Test
    void leaderRefusesToTransferLeadershipToARepairingFollower() {
        CoreNode l = leaderOf3();
        CoreNode damaged = fenced(N2, 0);
        // Keep it short of the target: it answers, but its answers are lost after the first.
        RecordingEffects.Send first = l.fx.takeOutbox().stream().filter(s -> s.isAppend() && s.to().equals(N2)).findFirst().orElseThrow();
        RaftCore.AppendResult r = damaged.core.handleAppendEntries(first.append(), T0);
        l.core.handleAppendEntriesResponse(N2, first.append(), r.response(), T0);
        io.wheelraft.core.Closure handle = status -> { };
        l.core.transferLeadership(N2, handle, T0 + 1);
        var done = l.fx.all(RecordingEffects.TransferDone.class);
        assertEquals(1, done.size());
        assertFalse(done.get(0).status().isOk());
        assertTrue(done.get(0).status().message().contains("repairing"), done.get(0).status().message());
    }

    // ------------------------------------------------------------ nothing used before it is durable

    private static final StorageException FULL = new StorageException("cannot persist term and vote to /data/raft_meta: No space left on device");

    /**
     * A vote is written before its grant may leave: the batch of the step carries it. That the grant
     * is not sent when the write fails is the shell's rule (ReadyCarrierTest); here, nothing of the
     * failed batch happens.
     */
    @Test
    void aVoteThatCannotBeWrittenIsNeitherGrantedNorUsed() {
        CoreNode n = CoreNode.create(N1, peers(3), 0, new long[0], 0);
        assertTrue(n.core.handleRequestVote(voteRequest(N2, 1, 0, 0, false), LATER).getGranted());
        assertEquals(new Ready.HardState(1, N2), n.core.ready().hardState(), "the grant's step must carry the vote to persist");
        n.fx.failHardState = FULL;
        assertThrows(StorageException.class, n.fx::drain);
        assertTrue(n.fx.sends().isEmpty());
        assertTrue(n.fx.all(RecordingEffects.HardState.class).isEmpty());
    }

    @Test
    void aCandidacyThatCannotBeWrittenSendsNothingInTheNewTerm() {
        CoreNode n = CoreNode.create(N1, peers(3), 0, new long[0], 0);
        n.fx.failHardState = FULL;
        n.core.onElectionTimeout(T0);
        List<RecordingEffects.Send> preVotes = n.fx.takeOutbox();
        assertEquals(2, preVotes.size());
        for (RecordingEffects.Send s : preVotes) {
            n.core.handleRequestVoteResponse(s.to(), s.vote(), CoreNode.granted(0, true), T0);
        }
        assertEquals(new Ready.HardState(1, N1), n.core.ready().hardState());
        assertThrows(StorageException.class, n.fx::drain);
        assertTrue(n.fx.sends().stream().noneMatch(RecordingEffects.Send::isVote), "a vote request left for a term not on disk");
        assertTrue(n.fx.all(RecordingEffects.RoleChange.class).isEmpty(), "the candidacy became visible although not on disk");
    }

    @Test
    void aHigherTermFromALeaderThatCannotBeWrittenIsNotAcknowledged() {
        CoreNode n = CoreNode.create(N2, peers(3), 1, new long[] {1}, 0);
        n.fx.failHardState = FULL;
        n.core.handleAppendEntries(append(N1, 2, 1, 1, false, CoreNode.data(2, 2, "x")), 10);
        assertThrows(StorageException.class, n.fx::drain);
        assertTrue(n.fx.all(RecordingEffects.Persist.class).isEmpty(), "entries of a term not on disk were written");
        assertTrue(n.fx.all(RecordingEffects.Commit.class).isEmpty());
    }
}
