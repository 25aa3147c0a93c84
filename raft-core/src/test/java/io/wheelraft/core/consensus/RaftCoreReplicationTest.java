package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.config;
import static io.wheelraft.core.consensus.CoreNode.data;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Log replication in the pure core (Raft §5.3, §5.4.2): conflict hints and one-step backtracking,
 * truncating a conflicting suffix, stale acknowledgements, the Figure 8 commit rule, durable
 * self-counting, follower commit, heartbeats, the pipelining window, fallback to probing, and
 * check-quorum.
 */
class RaftCoreReplicationTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long T0 = ELECTION_TIMEOUT_MS;

    private static AppendEntriesRequest append(PeerId leader, long term, long prev, long prevTerm, long commit, LogEntry... entries) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(leader.toString()).setTerm(term)
                .setPrevLogIndex(prev).setPrevLogTerm(prevTerm).setCommittedIndex(commit).addAllEntries(List.of(entries))
                .setSequence(entries.length == 0 ? 0 : 1).build();
    }

    private static List<AppendEntriesRequest> appendsTo(CoreNode leader, PeerId to) {
        return leader.fx.sends().stream().filter(s -> s.isAppend() && s.to().equals(to)).map(RecordingEffects.Send::append).toList();
    }

    private static List<RecordingEffects.Send> outboxTo(List<RecordingEffects.Send> outbox, PeerId to) {
        return outbox.stream().filter(s -> s.isAppend() && s.to().equals(to)).toList();
    }

    /**
     * n1 leading n2 and n3 with a window of three appends of at most two entries each, both
     * followers matched and so replicating: {leader, n2, n3}.
     */
    private static CoreNode[] replicatingGroupOfThree() {
        CoreNode leader = CoreNode.create(config(N1, 3, 2), peers(3), 0, new long[] {}, 0);
        CoreNode n2 = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        CoreNode n3 = CoreNode.create(N3, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        new CoreRouter(List.of(leader, n2, n3)).settle(T0);
        return new CoreNode[] {leader, n2, n3};
    }

    /** Delivers one append to a follower and its (durable) answer back to the leader. */
    private static void deliver(CoreNode leader, CoreNode follower, AppendEntriesRequest req, long nowMs) {
        RaftCore.AppendResult r = follower.core.handleAppendEntries(req, nowMs);
        follower.flushDisk();
        leader.core.handleAppendEntriesResponse(follower.id, req, r.response(), nowMs);
    }

    // ------------------------------------------------------------ follower side

    @Test
    void followerRejectsAMismatchWithTheConflictingTermAndItsFirstIndex() {
        CoreNode f = CoreNode.create(N2, peers(3), 2, new long[] {1, 1, 2, 2, 2}, 0);
        AppendEntriesResponse mismatch = f.core.handleAppendEntries(append(N1, 3, 5, 3, 0), 10).response();
        assertEquals(false, mismatch.getSuccess());
        assertEquals(2, mismatch.getConflictTerm());
        assertEquals(3, mismatch.getConflictIndex(), "the hint must point at the first index of the conflicting term");

        AppendEntriesResponse tooShort = f.core.handleAppendEntries(append(N1, 3, 8, 3, 0), 10).response();
        assertEquals(false, tooShort.getSuccess());
        assertEquals(0, tooShort.getConflictTerm());
        assertEquals(6, tooShort.getConflictIndex(), "a follower that is too short names its next index");
    }

    /**
     * A configuration entry that only this follower's log held (an old leader's, never
     * committed) is cut by the new leader's entries, which bring no configuration of their own:
     * the one before is in effect again, and the node and its role hear of it.
     */
    @Test
    void followerRevertsAConfigurationThatATruncationRemoved() {
        CoreNode f = CoreNode.create(N3, peers(3), 2, new long[] {1, 1}, 0);
        Membership demoted = new Membership(new io.wheelraft.core.Configuration(List.of(N1, N2), List.of(N3)), null, 3);
        LogEntry change = LogEntry.newBuilder().setIndex(3).setTerm(2).setType(io.wheelraft.proto.EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(demoted.toEntry()).build();
        assertTrue(f.core.handleAppendEntries(append(N1, 2, 2, 1, 0, change), 10).response().getSuccess());
        assertEquals(Role.LEARNER, f.core.role(), "the appended configuration is in effect at once");
        f.fx.events().clear();

        assertTrue(f.core.handleAppendEntries(append(N2, 3, 2, 1, 0, data(3, 3, "x")), 20).response().getSuccess());
        assertEquals(Set.of(N1, N2, N3), f.core.memberships().current().voters(), "the configuration before the cut one");
        assertEquals(Role.FOLLOWER, f.core.role(), "a voter again");
        List<RecordingEffects.MembershipChange> changes = f.fx.all(RecordingEffects.MembershipChange.class);
        assertEquals(1, changes.size(), "the shell must hear of the reverted membership: " + f.fx.events());
        assertEquals(Set.of(N1, N2, N3), changes.get(0).membership().voters());
    }

    @Test
    void followerTruncatesAConflictingSuffixAndFailsWhatWaitedOnIt() {
        CoreNode f = CoreNode.create(N2, peers(3), 2, new long[] {1, 1, 2, 2, 2}, 0);
        RaftCore.AppendResult r = f.core.handleAppendEntries(append(N1, 3, 2, 1, 0, data(3, 3, "x"), data(4, 3, "y")), 10);
        assertTrue(r.response().getSuccess());
        assertEquals(4, r.response().getLastLogIndex());
        assertEquals(4, r.requiredPersistedIndex(), "the acknowledgement must wait for the new entries to be durable");
        RecordingEffects.Persist w = f.fx.all(RecordingEffects.Persist.class).get(0);
        assertEquals(2, w.truncateAfter(), "the disk must drop the old entries 3..5 before appending");
        assertEquals(List.of(3L, 4L), w.entries().stream().map(LogEntry::getIndex).toList());
        assertTrue(f.fx.events().contains(new RecordingEffects.Discarded(3)), f.fx.events().toString());
        f.flushDisk();
        assertEquals(4, f.storage.lastLogIndex());
        assertEquals(3, f.storage.term(4));
    }

    @Test
    void staleDiskAcknowledgementOfOverwrittenEntriesIsIgnored() {
        CoreNode f = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        f.core.handleAppendEntries(append(N1, 1, 0, 0, 0, data(1, 1, "a"), data(2, 1, "b"), data(3, 1, "c")), 10);
        // A new leader overwrites 2..3 before the disk acknowledged the first write.
        f.core.handleAppendEntries(append(N3, 2, 1, 1, 2, data(2, 2, "B")), 20);
        assertTrue(f.fx.events().contains(new RecordingEffects.Discarded(2)));
        f.core.onPersisted(3, 1, 0); // the old write's acknowledgement
        assertEquals(0, f.log.persistedIndex(), "an acknowledgement of replaced entries must not count");
        assertEquals(0, f.fx.lastCommitReported(), "nothing may be applied on a stale acknowledgement");
        f.core.onPersisted(2, 2, 0);
        assertEquals(2, f.log.persistedIndex());
        assertEquals(2, f.fx.lastCommitReported());
    }

    /** Raft Figure 2, AppendEntries rule 5: commit = min(leaderCommit, index of last new entry). */
    @Test
    void followerCommitIsTheMinimumOfLeaderCommitAndItsLastNewEntry() {
        CoreNode f = CoreNode.create(N2, peers(3), 1, new long[] {1, 1, 1, 1, 1}, 0);
        f.core.handleAppendEntries(append(N1, 1, 2, 1, 5, data(3, 1, "old-3")), 10);
        assertEquals(3, f.core.commitIndex(), "entries 4..5 are not known to match the leader's log");
        assertEquals(3, f.fx.lastCommitReported());
        f.core.handleAppendEntries(append(N1, 1, 0, 0, 5), 20); // a heartbeat from a point it knows
        assertEquals(3, f.core.commitIndex());
    }

    // ------------------------------------------------------------ leader side

    @Test
    void leaderSkipsBackOverAWholeConflictingTermInOneStep() {
        CoreNode leader = CoreNode.create(N1, peers(3), 3, new long[] {1, 1, 3, 3, 3}, 0);
        CoreNode f = CoreNode.create(N2, peers(3), 2, new long[] {1, 1, 2, 2, 2, 2, 2}, 0);
        leader.electByHand(T0);
        CoreRouter net = new CoreRouter(List.of(leader, f));
        net.settle(T0);
        List<Long> prevs = appendsTo(leader, N2).stream().map(AppendEntriesRequest::getPrevLogIndex).toList();
        assertEquals(List.of(5L, 2L), prevs.subList(0, 2), "expected one probe at 5, then straight to 2; got " + prevs);
        assertEquals(6, f.log.lastIndex());
        assertEquals(List.of(1L, 1L, 3L, 3L, 3L, 4L), List.of(f.log.term(1), f.log.term(2), f.log.term(3), f.log.term(4), f.log.term(5), f.log.term(6)));
        assertEquals(6, leader.core.commitIndex());
    }

    @Test
    void leaderResumesAfterItsOwnLastEntryOfTheFollowersConflictingTerm() {
        CoreNode leader = CoreNode.create(N1, peers(3), 3, new long[] {1, 2, 2, 3, 3}, 0);
        CoreNode f = CoreNode.create(N2, peers(3), 2, new long[] {1, 2, 2, 2, 2, 2}, 0);
        leader.electByHand(T0);
        new CoreRouter(List.of(leader, f)).settle(T0);
        List<Long> prevs = appendsTo(leader, N2).stream().map(AppendEntriesRequest::getPrevLogIndex).toList();
        assertEquals(List.of(5L, 3L), prevs.subList(0, 2), "after our last term-2 entry (3); got " + prevs);
        assertEquals(6, f.log.lastIndex());
        assertEquals(4, f.log.term(6));
    }

    /**
     * Raft §5.4.2 and Figure 8: an entry of an earlier term is never committed by counting
     * replicas, even on every server; it commits only with an entry of the leader's own term.
     * Here S1 led term 2 and wrote index 2 only locally, then (after a term 3 elsewhere that wrote
     * nothing durable) is leader of term 4: it brings index 2 to everyone, and must still wait for
     * its own term-4 entry 3 to reach a majority.
     */
    @Test
    void leaderCommitsOnlyEntriesOfItsOwnTermByCountingReplicas() {
        RaftConfig oneAtATime = config(N1, 4, 1);
        CoreNode s1 = CoreNode.create(oneAtATime, peers(5), 3, new long[] {1, 2}, 0);
        List<CoreNode> all = new java.util.ArrayList<>(List.of(s1));
        for (int i = 2; i <= 5; i++) {
            all.add(CoreNode.create(peer(i), peers(5), 3, new long[] {1}, 0));
        }
        s1.electByHand(T0);
        assertEquals(4, s1.core.term());
        CoreRouter net = new CoreRouter(all);

        net.round(T0); // probes at 2 are refused: followers hold only index 1
        assertEquals(0, s1.core.commitIndex());
        net.round(T0); // index 2 (term 2) now on all five servers
        for (CoreNode n : all) {
            assertEquals(2, n.log.term(2), n.id + " lacks index 2");
        }
        assertEquals(0, s1.core.commitIndex(), "committed an entry of term 2 by counting replicas (Figure 8)");
        assertEquals(0, s1.fx.lastCommitReported());

        net.round(T0); // the term-4 entry 3 reaches the followers
        assertEquals(3, s1.core.commitIndex(), "entry 3 of the leader's term is on a majority: it and everything before commit");
        assertEquals(3, s1.fx.lastCommitReported());
    }

    @Test
    void leaderCountsItselfOnlyUpToItsPersistedIndex() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, new long[] {}, 0);
        CoreNode f = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        CoreRouter net = new CoreRouter(List.of(leader, f));
        net.flushSenders = false; // the leader's own write of entry 1 is still on its way to disk
        net.settle(T0);
        assertEquals(1, leader.core.followerMatchIndexes().get(N2));
        assertEquals(0, leader.core.commitIndex(), "n2 alone is no majority: the leader's own copy is not durable yet");
        leader.flushDisk();
        assertEquals(1, leader.core.commitIndex());
        assertEquals(1, leader.fx.lastCommitReported());
    }

    @Test
    void heartbeatsCarryTheSmallerOfCommitAndTheFollowersMatch() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, new long[] {}, 0);
        CoreNode n2 = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        CoreNode n3 = CoreNode.create(N3, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        CoreRouter net = new CoreRouter(List.of(leader, n2, n3));
        net.settle(T0);
        net.cut.add(N3);
        leader.core.propose(leader.commands(3), T0 + 1);
        net.settle(T0 + 1);
        assertEquals(4, leader.core.commitIndex());

        leader.fx.takeOutbox();
        leader.core.onHeartbeatTimeout(T0 + 100);
        List<RecordingEffects.Send> beats = leader.fx.takeOutbox();
        AppendEntriesRequest toN2 = outboxTo(beats, N2).get(0).append();
        AppendEntriesRequest toN3 = outboxTo(beats, N3).get(0).append();
        assertEquals(0, toN2.getEntriesCount());
        assertEquals(4, toN2.getPrevLogIndex());
        assertEquals(4, toN2.getCommittedIndex());
        assertEquals(1, toN3.getPrevLogIndex(), "a heartbeat goes out at the follower's match point");
        assertEquals(1, toN3.getCommittedIndex(), "n3 holds only up to 1: the heartbeat must not commit beyond it");
    }

    @Test
    void pipelinesAppendsUpToTheInflightWindow() {
        CoreNode[] group = replicatingGroupOfThree();
        CoreNode leader = group[0];
        CoreNode n2 = group[1];

        leader.core.propose(leader.commands(20), T0 + 1);
        List<RecordingEffects.Send> window = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(3, window.size(), "maxInflightAppends = 3, without waiting for answers");
        assertEquals(List.of(1L, 3L, 5L), window.stream().map(s -> s.append().getPrevLogIndex()).toList());
        assertTrue(window.stream().allMatch(s -> s.append().getEntriesCount() == 2));

        deliver(leader, n2, window.get(0).append(), T0 + 2);
        List<RecordingEffects.Send> next = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(1, next.size(), "one answer frees exactly one slot");
        assertEquals(7, next.get(0).append().getPrevLogIndex());
        assertEquals(3, leader.core.followerMatchIndexes().get(N2));
    }

    @Test
    void failedAppendDropsAReplicatingFollowerBackToProbing() {
        CoreNode[] group = replicatingGroupOfThree();
        CoreNode leader = group[0];
        CoreNode n2 = group[1];
        leader.core.propose(leader.commands(6), T0 + 1);
        List<RecordingEffects.Send> window = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(3, window.size());

        leader.core.handleAppendEntriesFailure(N2, window.get(0).append());
        leader.core.propose(leader.commands(1), T0 + 2);
        assertTrue(outboxTo(leader.fx.takeOutbox(), N2).isEmpty(), "after a failed append the follower gets none until it answers a heartbeat");

        leader.core.onHeartbeatTimeout(T0 + 100);
        List<RecordingEffects.Send> heartbeat = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(1, heartbeat.size());
        assertTrue(heartbeat.get(0).append().getHeartbeat());
        deliver(leader, n2, heartbeat.get(0).append(), T0 + 101);
        List<RecordingEffects.Send> probe = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(1, probe.size(), "the heartbeat's answer resumes probing, one append at a time");
        assertEquals(1, probe.get(0).append().getPrevLogIndex(), "the probe restarts right after the last known match");
        leader.core.propose(leader.commands(1), T0 + 102);
        assertTrue(outboxTo(leader.fx.takeOutbox(), N2).isEmpty(), "a second append while the probe is unanswered");

        deliver(leader, n2, probe.get(0).append(), T0 + 103);
        assertEquals(3, leader.core.followerMatchIndexes().get(N2));
        assertEquals(3, outboxTo(leader.fx.takeOutbox(), N2).size(), "an answered probe returns to pipelining");
    }

    /** A follower whose process is gone: each proposal would otherwise send it a probe, read from storage, that fails at once. */
    @Test
    void aProbeThatFailedWaitsForAHeartbeatAnswerNotForTheNextProposal() {
        CoreNode[] group = replicatingGroupOfThree();
        CoreNode leader = group[0];
        CoreNode n2 = group[1];
        leader.core.propose(leader.commands(2), T0 + 1);
        leader.core.handleAppendEntriesFailure(N2, outboxTo(leader.fx.takeOutbox(), N2).get(0).append());

        for (int i = 0; i < 5; i++) { // writes go on, and every send to n2 fails
            leader.core.propose(leader.commands(1), T0 + 2 + i);
            assertTrue(outboxTo(leader.fx.takeOutbox(), N2).isEmpty(), "proposal " + i + " sent n2 an append");
        }
        leader.core.onHeartbeatTimeout(T0 + 100);
        AppendEntriesRequest heartbeat = outboxTo(leader.fx.takeOutbox(), N2).get(0).append();
        leader.core.handleAppendEntriesFailure(N2, heartbeat);
        leader.core.propose(leader.commands(1), T0 + 101);
        assertTrue(outboxTo(leader.fx.takeOutbox(), N2).isEmpty(), "a failed heartbeat resumes nothing");

        leader.core.onHeartbeatTimeout(T0 + 200);
        deliver(leader, n2, outboxTo(leader.fx.takeOutbox(), N2).get(0).append(), T0 + 201);
        List<RecordingEffects.Send> probe = outboxTo(leader.fx.takeOutbox(), N2);
        assertEquals(1, probe.size(), "an answered heartbeat resumes the probe");
        deliver(leader, n2, probe.get(0).append(), T0 + 202);
        assertEquals(3, leader.core.followerMatchIndexes().get(N2));
    }

    // ------------------------------------------------------------ check-quorum

    /** Thesis §6.2 (check-quorum): a leader that has not heard from a majority within the timeout steps down. */
    @Test
    void stepDownCheckStepsDownWithoutARecentQuorumAndStaysWithOne() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, new long[] {}, 0);
        CoreNode n2 = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        CoreRouter net = new CoreRouter(List.of(leader, n2)); // n3 is dead
        long answered = T0 + 400;
        net.settle(answered);

        leader.core.onStepDownCheck(answered + ELECTION_TIMEOUT_MS - 1);
        assertTrue(leader.core.isLeader(), "n2 answered within the timeout: with the leader that is a quorum");

        leader.core.onHeartbeatTimeout(answered + 600);
        net.settle(answered + 600);
        leader.core.onStepDownCheck(answered + 600 + ELECTION_TIMEOUT_MS - 1);
        assertTrue(leader.core.isLeader(), "heartbeat answers must keep the leader");

        net.cut.add(N2);
        leader.core.onHeartbeatTimeout(answered + 1000);
        net.settle(answered + 1000);
        leader.core.onStepDownCheck(answered + 600 + ELECTION_TIMEOUT_MS);
        assertEquals(Role.FOLLOWER, leader.core.role(), "no quorum answered for a whole election timeout");
        assertEquals(1, leader.core.term(), "stepping down for check-quorum does not change the term");
    }
}
