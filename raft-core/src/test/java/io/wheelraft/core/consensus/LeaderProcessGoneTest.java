package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.GRACE_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hold after a broken leader connection, once the transport finds the leader's process gone
 * (a new connection refused): no heartbeat of that leader can still come, so the part of the hold
 * that waits for one ends; the part that outlasts a read lease stays, counted from the last
 * heartbeat that could carry one. And the leader's side: its heartbeats carry a lease only while
 * lease reads were asked for lately.
 */
class LeaderProcessGoneTest {

    private static final long[] EMPTY = {};
    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    /** The hold after the last heartbeat (RaftConfig#brokenLeaderHoldMs). */
    private static final long HOLD = GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50;

    /** A follower started long before the scenes below (a start counts as a heartbeat for the hold). */
    private static CoreNode node(PeerId self) {
        return CoreNode.create(self, peers(3), 0, EMPTY, -ELECTION_TIMEOUT_MS);
    }

    /** A heartbeat-timer heartbeat of leader n1 in term 1; {@code lease}: it may carry a read lease. */
    private static AppendEntriesRequest heartbeat(boolean lease) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1).setHeartbeat(true)
                .setFailoverTurn(2).setNoLease(!lease).build();
    }

    private static RequestVoteRequest brokePreVote(PeerId candidate) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(2).setPreVote(true)
                .setLeaderConnectionBroke(true).build();
    }

    private static boolean granted(CompletableFuture<RequestVoteResponse> answer) {
        return answer.isDone() && answer.join().getGranted();
    }

    @Test
    void aVoterBacksACandidateAtOnceWhenTheGoneLeadersHeartbeatsCarriedNoLease() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        voter.core.onConnectionLost(N1.endpoint(), 110);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 112, answer::complete), "held: a flap would bring a heartbeat");
        voter.fx.drain();
        assertFalse(answer.isDone());

        voter.core.onPeerGone(N1.endpoint(), 113);
        voter.fx.drain();
        assertTrue(granted(answer), "the leader's process is gone and no lease rests on us: " + answer.getNow(null));
        assertTrue(voter.core.handleRequestVote(brokePreVote(N2).toBuilder().setPreVote(false).build(), 115).getGranted(),
                "the real vote passes the disruptive-server guard the same way");
    }

    @Test
    void aVoterStillWaitsOutALeaseTheGoneLeadersHeartbeatsMayCarry() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(true), 100);
        voter.core.onConnectionLost(N1.endpoint(), 110);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 112, answer::complete));
        voter.core.onPeerGone(N1.endpoint(), 113);
        voter.fx.drain();
        assertFalse(answer.isDone(), "granted within a lease the leader may still serve reads on");

        voter.core.onWake(100 + HOLD);
        voter.fx.drain();
        assertTrue(granted(answer), String.valueOf(answer.getNow(null)));
    }

    @Test
    void theLeasePartOfTheHoldCountsFromTheLastHeartbeatThatCouldCarryALease() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(true), 100);
        voter.core.handleAppendEntries(heartbeat(false), 180); // lease reads stopped; later heartbeats carry none
        voter.core.onConnectionLost(N1.endpoint(), 190);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 191, answer::complete));
        voter.core.onPeerGone(N1.endpoint(), 192);
        voter.fx.drain();
        assertFalse(answer.isDone());
        voter.core.onWake(100 + HOLD - 1);
        voter.fx.drain();
        assertFalse(answer.isDone(), "before the lease of the heartbeat at 100 ran out");
        voter.core.onWake(100 + HOLD);
        voter.fx.drain();
        assertTrue(granted(answer), "not 180 + hold: the heartbeat at 180 carried no lease; " + answer.getNow(null));
    }

    @Test
    void aGoneReportWithoutABreakOrAboutAnotherPeerChangesNothing() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        voter.core.onPeerGone(N1.endpoint(), 105); // no break seen: a stale or misrouted report
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 110, answer::complete));
        voter.core.onPeerGone(N2.endpoint(), 111);
        voter.fx.drain();
        assertFalse(answer.isDone(), "the leader was neither seen broken nor reported gone");
    }

    @Test
    void aLeaderThatSpeaksAgainCancelsTheGoneReport() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        voter.core.onConnectionLost(N1.endpoint(), 110);
        voter.core.onPeerGone(N1.endpoint(), 111);
        voter.core.handleAppendEntries(heartbeat(false), 150); // a new process at the address, or a mistaken report
        voter.core.onConnectionLost(N1.endpoint(), 160);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 161, answer::complete), "the old report must not carry over");
        voter.fx.drain();
        assertFalse(answer.isDone());
    }

    @Test
    void aWonPreVoteWaitingForTheOwnHoldBecomesACandidacyWhenTheLeaderIsGone() {
        CoreNode n2 = node(N2);
        n2.core.handleAppendEntries(heartbeat(false), 100);
        n2.core.onConnectionLost(N1.endpoint(), 110);
        n2.core.onConnectionLostGraceElapsed(110);
        RequestVoteRequest pre = n2.fx.takeOutbox().stream().filter(x -> x.to().equals(N3)).findFirst().orElseThrow().vote();
        n2.core.handleRequestVoteResponse(N3, pre, RequestVoteResponse.newBuilder().setTerm(1).setPreVote(true).setGranted(true).build(), 111);
        n2.fx.drain();
        assertEquals(Role.FOLLOWER, n2.core.role(), "its own hold is not over yet");

        n2.core.onPeerGone(N1.endpoint(), 112);
        n2.fx.drain();
        assertEquals(Role.CANDIDATE, n2.core.role());
        assertEquals(2, n2.core.term());
    }

    private static RequestVoteRequest claimsGone(RequestVoteRequest pre) {
        return pre.toBuilder().setLeaderProcessGone(true).build();
    }

    @Test
    void aVoterThatSawTheBreakTakesTheCandidatesWordThatTheLeaderIsGone() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        voter.core.onConnectionLost(N1.endpoint(), 110);
        var answer = new CompletableFuture<RequestVoteResponse>();
        RequestVoteResponse now = voter.core.handleRequestVote(claimsGone(brokePreVote(N2)), 112, answer::complete);
        assertTrue(now != null && now.getGranted(), "its own probe has not answered yet, the candidate's did: " + now);
    }

    @Test
    void theCandidatesWordDoesNotSpareALeaseTheVoterMayCarry() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(true), 100);
        voter.core.onConnectionLost(N1.endpoint(), 110);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(claimsGone(brokePreVote(N2)), 112, answer::complete));
        voter.core.onWake(100 + HOLD);
        voter.fx.drain();
        assertTrue(granted(answer), String.valueOf(answer.getNow(null)));
    }

    @Test
    void aVoterWhoseOwnBreakReportIsLateTakesTheWordForTheBreakToo() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        RequestVoteResponse now = voter.core.handleRequestVote(claimsGone(brokePreVote(N2)), 105, r -> { });
        assertTrue(now != null && now.getGranted(), String.valueOf(now));
        assertTrue(voter.core.handleRequestVote(claimsGone(brokePreVote(N2)).toBuilder().setPreVote(false).build(), 106).getGranted(),
                "and the real vote that follows");
    }

    @Test
    void aWordWithoutTheBreakOrFromAnotherTermIsNotTaken() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(false), 100);
        var answer = new CompletableFuture<RequestVoteResponse>();
        RequestVoteRequest noBreak = claimsGone(brokePreVote(N2)).toBuilder().setLeaderConnectionBroke(false).build();
        RequestVoteResponse now = voter.core.handleRequestVote(noBreak, 105, answer::complete);
        assertTrue(now != null && !now.getGranted(), "a word about a process without a break is no word: " + now);
        RequestVoteRequest laterTerm = claimsGone(brokePreVote(N2)).toBuilder().setTerm(3).build();
        assertNull(voter.core.handleRequestVote(laterTerm, 106, answer::complete), "not a follower of our leader's term: held as before");
    }

    @Test
    void theCandidatesWordStillLeavesTheLeaseToTheVotersOwnHeartbeats() {
        CoreNode voter = node(N3);
        voter.core.handleAppendEntries(heartbeat(true), 100);
        var answer = new CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(claimsGone(brokePreVote(N2)), 105, answer::complete));
        voter.core.onWake(100 + HOLD - 1);
        voter.fx.drain();
        assertFalse(answer.isDone());
        voter.core.onWake(100 + HOLD);
        voter.fx.drain();
        assertTrue(granted(answer), String.valueOf(answer.getNow(null)));
    }

    @Test
    void aCandidateWhoseProbeAnswersAfterItsPreVoteLeftAsksAgainWithTheFinding() {
        CoreNode n2 = node(N2);
        n2.core.handleAppendEntries(heartbeat(false), 100);
        n2.core.onConnectionLost(N1.endpoint(), 110);
        n2.core.onConnectionLostGraceElapsed(110);
        assertTrue(n2.fx.takeOutbox().stream().noneMatch(x -> x.vote().getLeaderProcessGone()));
        n2.core.onPeerGone(N1.endpoint(), 112);
        List<RequestVoteRequest> again = n2.fx.takeOutbox().stream().map(RecordingEffects.Send::vote).toList();
        assertEquals(2, again.size(), "one to each other voter: " + again);
        assertTrue(again.stream().allMatch(r -> r.getPreVote() && r.getTerm() == 2 && r.getLeaderProcessGone()), again.toString());
    }

    // ------------------------------------------------------------ the leader's side

    /** The followers did not answer these heartbeats: their calls failed. */
    private static void unanswered(CoreNode leader, List<AppendEntriesRequest> heartbeats) {
        heartbeats.forEach(hb -> leader.core.handleAppendEntriesFailure(io.wheelraft.core.PeerId.parse(hb.getPeerId()), hb));
    }

    private static List<AppendEntriesRequest> heartbeatsSent(CoreNode leader) {
        return leader.fx.takeOutbox().stream().filter(RecordingEffects.Send::isAppend).map(RecordingEffects.Send::append)
                .filter(AppendEntriesRequest::getHeartbeat).toList();
    }

    @Test
    void aLeaderMarksItsHeartbeatsLeaseFreeUnlessLeaseReadsWereAskedForLately() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, EMPTY, 0);
        leader.electByHand(1000);
        leader.fx.takeOutbox();
        leader.core.onHeartbeatTimeout(1100);
        List<AppendEntriesRequest> first = heartbeatsSent(leader);
        assertTrue(first.stream().allMatch(AppendEntriesRequest::getNoLease), "no lease read asked for yet");
        unanswered(leader, first); // a follower still owing an answer would get no next round for a while

        leader.core.readIndex(List.of(RecordingEffects.read("lease read")), true, 1150);
        leader.fx.takeOutbox(); // the read's own round (a read round, never a lease)
        leader.core.onHeartbeatTimeout(1200);
        List<AppendEntriesRequest> armed = heartbeatsSent(leader);
        assertFalse(armed.isEmpty());
        assertTrue(armed.stream().noneMatch(AppendEntriesRequest::getNoLease), "a lease read was asked for: the rounds carry the lease");
        unanswered(leader, armed);

        long expired = 1150 + leader.config.leaseArmedForMs();
        leader.core.onHeartbeatTimeout(expired);
        assertTrue(heartbeatsSent(leader).stream().allMatch(AppendEntriesRequest::getNoLease), "no lease read for a while: lease-free again");
    }

    @Test
    void aLeaderWhoseOptionsChooseLeasesAlwaysCarriesTheLease() {
        CoreNode leader = CoreNode.create(new RaftConfig("g", N1, ELECTION_TIMEOUT_MS, GRACE_MS, 4, 64, 1 << 20, true, 0),
                peers(3), 0, EMPTY, 0);
        leader.electByHand(1000);
        leader.fx.takeOutbox();
        leader.core.onHeartbeatTimeout(1100);
        List<AppendEntriesRequest> sent = heartbeatsSent(leader);
        assertFalse(sent.isEmpty());
        assertTrue(sent.stream().noneMatch(AppendEntriesRequest::getNoLease));
    }
}
