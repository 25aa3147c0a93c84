package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.GRACE_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Elections in the pure core: pre-vote (thesis §9.6), the disruptive-server guard (thesis
 * §4.2.3), one vote per term (§5.2), the election restriction (§5.4.1), persisting before
 * speaking, stepping down on a higher term, quorum without the dead, split votes, and the
 * broken-connection fast path.
 */
class RaftCoreElectionTest {

    private static final long[] EMPTY = {};
    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);

    private static CoreNode node(PeerId self, int members) {
        return CoreNode.create(self, peers(members), 0, EMPTY, 0);
    }

    private static RequestVoteRequest voteRequest(PeerId candidate, long term, long lastIndex, long lastTerm, boolean preVote) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term)
                .setLastLogIndex(lastIndex).setLastLogTerm(lastTerm).setPreVote(preVote).build();
    }

    private static AppendEntriesRequest heartbeat(PeerId leader, long term) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(leader.toString()).setTerm(term).setHeartbeat(true).build();
    }

    // ------------------------------------------------------------ pre-vote

    @Test
    void followerStartsPreVoteOnlyOnceItsLeaderIsLost() {
        CoreNode n = node(N1, 3);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS - 1);
        assertTrue(n.fx.sends().isEmpty(), "campaigned before an election timeout of silence");

        n.core.handleAppendEntries(heartbeat(N2, 1), 500);
        n.core.onElectionTimeout(500 + ELECTION_TIMEOUT_MS - 1);
        assertTrue(n.fx.sends().isEmpty(), "campaigned although the leader spoke less than a timeout ago");

        n.core.onElectionTimeout(500 + ELECTION_TIMEOUT_MS);
        List<RecordingEffects.Send> sent = n.fx.sends();
        assertEquals(2, sent.size());
        assertTrue(sent.stream().allMatch(RecordingEffects.Send::isPreVote), "first round must be a pre-vote: " + sent);
        assertEquals(2, sent.get(0).vote().getTerm(), "pre-vote asks for term + 1");
    }

    /**
     * A follower that gave its vote to another candidate does not run its own pre-vote until that
     * candidate has had half an election timeout to win and announce itself. A retry firing in
     * between (its earlier round lost) once started a pre-vote the still-candidate winner
     * granted, and the next term deposed the new leader.
     */
    @Test
    void aFollowerThatVotedForAnotherCandidateLetsItAnnounceItselfBeforeItsOwnPreVote() {
        CoreNode n = node(N3, 3);
        n.core.handleAppendEntries(heartbeat(N1, 1), 100);
        long granted = 100 + ELECTION_TIMEOUT_MS + 50; // the leader has been silent (quiet) for a timeout
        assertTrue(n.core.handleRequestVote(voteRequest(N2, 2, 0, 0, false), granted).getGranted());
        n.fx.takeOutbox();

        n.core.onElectionRetry(granted + 100);
        n.core.onElectionTimeout(granted + 100);
        assertTrue(n.fx.takeOutbox().isEmpty(), "ran its own pre-vote while the candidate it voted for could still win");

        n.core.onElectionRetry(granted + ELECTION_TIMEOUT_MS / 2);
        List<RecordingEffects.Send> sent = n.fx.takeOutbox();
        assertEquals(2, sent.size(), "the candidate never announced itself: campaign now");
        assertTrue(sent.stream().allMatch(RecordingEffects.Send::isPreVote), sent.toString());
    }

    @Test
    void preVoteBumpsNoTermAndRecordsNoVote() {
        CoreNode candidate = node(N1, 3);
        candidate.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        assertEquals(0, candidate.core.term());
        assertNull(candidate.core.votedFor());
        assertEquals(Role.FOLLOWER, candidate.core.role());
        assertTrue(candidate.fx.all(RecordingEffects.HardState.class).isEmpty(), "a pre-vote must not write term or vote");

        CoreNode voter = node(N2, 3);
        RequestVoteResponse r = voter.core.handleRequestVote(candidate.fx.sends().get(0).vote(), ELECTION_TIMEOUT_MS);
        assertTrue(r.getGranted() && r.getPreVote(), r.toString());
        assertEquals(0, voter.core.term(), "granting a pre-vote must not change the voter's term");
        assertNull(voter.core.votedFor());
        assertTrue(voter.fx.all(RecordingEffects.HardState.class).isEmpty());
    }

    /** Thesis §9.6: a voter that hears from a live leader refuses pre-votes. */
    @Test
    void preVoteIsRefusedWhileTheVoterHearsFromALiveLeader() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1), 100);
        RequestVoteResponse refused = voter.core.handleRequestVote(voteRequest(N2, 2, 0, 0, true), 200);
        assertFalse(refused.getGranted(), "pre-vote granted while leader n1 is alive");
        assertEquals(1, voter.core.term());

        RequestVoteResponse granted = voter.core.handleRequestVote(voteRequest(N2, 2, 0, 0, true), 100 + ELECTION_TIMEOUT_MS);
        assertTrue(granted.getGranted(), "pre-vote refused although the leader was silent for a timeout: " + granted.getReason());
    }

    /** A node cut off from a stable cluster times out again and again, yet on return does not depose the leader. */
    @Test
    void nodeRejoiningFromAPartitionDoesNotDisruptAStableLeader() {
        CoreNode n1 = node(N1, 3);
        CoreNode n2 = node(N2, 3);
        CoreNode n3 = node(N3, 3);
        CoreRouter net = new CoreRouter(List.of(n1, n2, n3));
        n1.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        net.settle(ELECTION_TIMEOUT_MS);
        assertTrue(n1.core.isLeader());
        long term = n1.core.term();

        net.cut.add(N3);
        long now = ELECTION_TIMEOUT_MS;
        for (int k = 0; k < 10; k++) {
            now += 2 * ELECTION_TIMEOUT_MS;
            n1.core.onHeartbeatTimeout(now);
            n3.core.onElectionTimeout(now);
            net.settle(now);
        }
        assertEquals(term, n3.core.term(), "pre-vote must keep the isolated node's term from climbing");

        net.cut.clear();
        n3.core.onElectionTimeout(now + 2 * ELECTION_TIMEOUT_MS); // its pre-vote now reaches n2, who hears from n1
        n1.core.onHeartbeatTimeout(now + 2 * ELECTION_TIMEOUT_MS - 10);
        net.settle(now + 2 * ELECTION_TIMEOUT_MS);
        assertTrue(n1.core.isLeader(), "the stable leader was deposed");
        assertEquals(term, n1.core.term());
        assertEquals(N1, n3.core.leader());
    }

    /** Thesis §4.2.3: a real RequestVote with a higher term is ignored, term included, while the leader is live. */
    @Test
    void voteRequestOfAHigherTermDoesNotEvenBumpTheTermWhileTheLeaderIsLive() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1), 100);
        RequestVoteResponse r = voter.core.handleRequestVote(voteRequest(N2, 7, 0, 0, false), 200);
        assertFalse(r.getGranted());
        assertEquals(1, voter.core.term());
        assertEquals(N1, voter.core.leader());
    }

    // ------------------------------------------------------------ real votes

    /** Raft §5.2: each server votes for at most one candidate in a term (and says so again to the same one). */
    @Test
    void grantsAtMostOneVotePerTerm() {
        CoreNode voter = node(N1, 3);
        long now = ELECTION_TIMEOUT_MS;
        assertTrue(voter.core.handleRequestVote(voteRequest(N2, 1, 0, 0, false), now).getGranted());
        voter.fx.drain();
        assertFalse(voter.core.handleRequestVote(voteRequest(N3, 1, 0, 0, false), now).getGranted(), "second vote in term 1");
        voter.fx.drain();
        assertTrue(voter.core.handleRequestVote(voteRequest(N2, 1, 0, 0, false), now).getGranted(), "a retried request from the same candidate");
        // One step's term bump and vote are one hard state write (Ready keeps the latest); no rewrite after.
        assertEquals(List.of(new RecordingEffects.HardState(1, N2)), voter.fx.all(RecordingEffects.HardState.class));
    }

    /** Raft §5.4.1: the election restriction, compared by last term first, then by length. */
    @Test
    void refusesVoteToACandidateWithAnOlderLog() {
        long[] log = {1, 1, 2};
        long now = ELECTION_TIMEOUT_MS;
        CoreNode voter = CoreNode.create(N1, peers(3), 2, log, 0);
        assertFalse(voter.core.handleRequestVote(voteRequest(N2, 3, 10, 1, false), now).getGranted(), "longer log of an older term");
        assertFalse(voter.core.handleRequestVote(voteRequest(N2, 4, 2, 2, false), now).getGranted(), "same last term, shorter");
        assertNull(voter.core.votedFor(), "a refused candidate must not be recorded as voted for");
        assertTrue(voter.core.handleRequestVote(voteRequest(N2, 5, 3, 2, false), now).getGranted(), "equal log");
        assertTrue(voter.core.handleRequestVote(voteRequest(N3, 6, 1, 3, false), now).getGranted(), "newer last term, shorter");
    }

    @Test
    void persistsTermAndVoteBeforeAnsweringAVote() {
        CoreNode voter = node(N1, 3);
        int before = voter.fx.events().size();
        RequestVoteResponse r = voter.core.handleRequestVote(voteRequest(N2, 4, 0, 0, false), ELECTION_TIMEOUT_MS);
        assertTrue(r.getGranted());
        List<RecordingEffects.HardState> written = voter.fx.all(RecordingEffects.HardState.class);
        assertTrue(voter.fx.events().size() > before);
        assertEquals(new RecordingEffects.HardState(4, N2), written.get(written.size() - 1),
                "the vote must be durable by the time the answer exists");
    }

    @Test
    void persistsTheNewTermBeforeSendingRequestVotesOfIt() {
        CoreNode n = node(N1, 3);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        RecordingEffects.Send pre = n.fx.takeOutbox().get(0);
        n.core.handleRequestVoteResponse(N2, pre.vote(), CoreNode.granted(0, true), ELECTION_TIMEOUT_MS);
        int persisted = n.fx.indexOf(e -> e instanceof RecordingEffects.HardState h && h.term() == 1 && N1.equals(h.votedFor()));
        int firstVote = n.fx.indexOf(e -> e instanceof RecordingEffects.Send s && s.isVote());
        assertTrue(persisted >= 0 && firstVote >= 0, n.fx.events().toString());
        assertTrue(persisted < firstVote, "RequestVote of term 1 sent before term and vote were persisted: " + n.fx.events());
        assertEquals(1, n.fx.sends().stream().filter(RecordingEffects.Send::isVote).findFirst().orElseThrow().vote().getTerm());
    }

    @Test
    void leaderStepsDownOnAHigherTermInAnAppendAnswer() {
        CoreNode leader = node(N1, 3);
        leader.electByHand(ELECTION_TIMEOUT_MS);
        RecordingEffects.Send append = leader.fx.takeOutbox().get(0);
        leader.core.handleAppendEntriesResponse(append.to(), append.append(),
                AppendEntriesResponse.newBuilder().setTerm(5).setSuccess(false).build(), ELECTION_TIMEOUT_MS + 1);
        assertSteppedDownTo(leader, 5);
    }

    @Test
    void leaderStepsDownOnAHigherTermInAVoteAnswer() {
        CoreNode leader = node(N1, 3);
        leader.electByHand(ELECTION_TIMEOUT_MS);
        leader.core.handleRequestVoteResponse(N3, voteRequest(N1, 1, 0, 0, false),
                RequestVoteResponse.newBuilder().setTerm(5).setGranted(false).build(), ELECTION_TIMEOUT_MS + 1);
        assertSteppedDownTo(leader, 5);
    }

    /**
     * A voter already in the term our pre-vote asks for refuses it for that alone. We take its
     * term and try again after the short retry pause, not after an election timeout (which failed
     * rounds stretch up to eightfold): that left the only node holding the last committed entry
     * idle for seconds after a partition healed, while the others could not win without it.
     */
    @Test
    void aPreVoteRefusedForItsTermAloneIsRetriedFromTheNewTermSoon() {
        CoreNode n = node(N1, 3);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        RecordingEffects.Send preVote = n.fx.takeOutbox().get(0);
        assertTrue(preVote.isPreVote());
        assertEquals(1, preVote.vote().getTerm());
        n.fx.clear();

        n.core.handleRequestVoteResponse(preVote.to(), preVote.vote(),
                RequestVoteResponse.newBuilder().setTerm(1).setGranted(false).setReason("stale term 1 <= 1").build(), ELECTION_TIMEOUT_MS + 5);
        assertEquals(1, n.core.term(), "takes the voter's term");
        assertTrue(n.fx.events().contains(new RecordingEffects.ElectionRetry()), "no retry planned: " + n.fx.events());

        n.fx.clear();
        n.core.onElectionRetry(ELECTION_TIMEOUT_MS + 40);
        List<RecordingEffects.Send> again = n.fx.takeOutbox();
        assertEquals(2, again.size(), "the retry asks both voters again");
        assertTrue(again.stream().allMatch(s -> s.isPreVote() && s.vote().getTerm() == 2), "a pre-vote for the term after the voter's: " + again);
    }

    /** An answer with a higher term to a round we left already only moves our term: nothing is retried for it. */
    @Test
    void aHigherTermInAnAnswerToAnOldRoundPlansNoRetry() {
        CoreNode n = node(N1, 3);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        RecordingEffects.Send preVote = n.fx.takeOutbox().get(0);
        n.core.handleAppendEntries(heartbeat(N2, 1), ELECTION_TIMEOUT_MS + 2); // a leader of term 1 speaks: the round ends
        n.fx.clear();

        n.core.handleRequestVoteResponse(preVote.to(), preVote.vote(),
                RequestVoteResponse.newBuilder().setTerm(3).setGranted(false).build(), ELECTION_TIMEOUT_MS + 5);
        assertEquals(3, n.core.term());
        assertFalse(n.fx.events().contains(new RecordingEffects.ElectionRetry()), "retry planned for a round already left: " + n.fx.events());
    }

    private static void assertSteppedDownTo(CoreNode n, long term) {
        assertEquals(Role.FOLLOWER, n.core.role());
        assertEquals(term, n.core.term());
        assertNull(n.core.votedFor());
        assertTrue(n.fx.events().contains(new RecordingEffects.HardState(term, null)));
        assertTrue(n.fx.events().contains(new RecordingEffects.RoleChange(Role.FOLLOWER, term, null)), n.fx.events().toString());
    }

    @Test
    void voteRoundIsDecidedByAQuorumWithoutWaitingForADeadPeer() {
        CoreNode n1 = node(N1, 5);
        CoreNode n2 = node(peer(2), 5);
        CoreNode n3 = node(peer(3), 5);
        // n4 and n5 are dead: not in the router, their messages vanish
        CoreRouter net = new CoreRouter(List.of(n1, n2, n3));
        n1.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        net.settle(ELECTION_TIMEOUT_MS);
        assertTrue(n1.core.isLeader(), "three of five granted, yet " + n1.core.role());
        assertEquals(1, n1.core.term());
    }

    @Test
    void splitVoteIsBrokenAtOnceByTheWeakerCandidateYielding() {
        CoreNode n1 = node(N1, 3);
        CoreNode n2 = node(N2, 3);
        CoreNode n3 = node(N3, 3);
        long now = ELECTION_TIMEOUT_MS;
        // Both pass pre-vote at once, each with n3's grant (n3 then hangs: it never answers the
        // vote), and campaign in term 1, each voting for itself. Without a tie-break both would
        // wait for the vote to n3 to time out.
        n1.core.onElectionTimeout(now);
        n2.core.onElectionTimeout(now);
        RequestVoteRequest pre1 = n1.fx.takeOutbox().stream().filter(s -> s.to().equals(N3)).findFirst().orElseThrow().vote();
        RequestVoteRequest pre2 = n2.fx.takeOutbox().stream().filter(s -> s.to().equals(N3)).findFirst().orElseThrow().vote();
        n1.core.handleRequestVoteResponse(N3, pre1, n3.core.handleRequestVote(pre1, now), now);
        n2.core.handleRequestVoteResponse(N3, pre2, n3.core.handleRequestVote(pre2, now), now);
        assertEquals(Role.CANDIDATE, n1.core.role());
        assertEquals(Role.CANDIDATE, n2.core.role());
        assertEquals(1, n1.core.term());
        assertEquals(1, n2.core.term());

        // Equal logs: the lower id (n1) wins the tie; n2 yields and backs it in term 2, with no
        // vote timeout in between.
        CoreRouter net = new CoreRouter(List.of(n1, n2));
        net.settle(now);
        assertTrue(n1.core.isLeader(), "the split was not resolved: n1 is " + n1.core.role());
        assertEquals(2, n1.core.term());
        assertEquals(N1, n2.core.leader());
    }

    /** Two survivors pre-vote at once: the weaker stands aside before either campaigns, so no split vote. */
    @Test
    void theWeakerOfTwoConcurrentPreVotesStandsAside() {
        CoreNode n1 = node(N1, 3);
        CoreNode n2 = node(N2, 3);
        long now = ELECTION_TIMEOUT_MS;
        n1.core.onElectionTimeout(now);
        n2.core.onElectionTimeout(now);
        RequestVoteRequest pre1 = n1.fx.takeOutbox().stream().filter(s -> s.to().equals(N2)).findFirst().orElseThrow().vote();
        RequestVoteRequest pre2 = n2.fx.takeOutbox().stream().filter(s -> s.to().equals(N1)).findFirst().orElseThrow().vote();
        RequestVoteResponse toN2 = n1.core.handleRequestVote(pre2, now);
        assertFalse(toN2.getGranted(), "the stronger (equal log, lower id) refuses the competing pre-vote");
        RequestVoteResponse toN1 = n2.core.handleRequestVote(pre1, now);
        assertTrue(toN1.getGranted(), "the weaker stands aside and backs the stronger: " + toN1);
        assertTrue(n2.fx.all(RecordingEffects.ElectionRetry.class).size() == 1, "the weaker looks again later, in case the stronger fails");
        n2.core.handleRequestVoteResponse(N1, pre2, toN2, now);
        n1.core.handleRequestVoteResponse(N2, pre1, toN1, now);
        assertEquals(Role.CANDIDATE, n1.core.role());
        assertEquals(Role.FOLLOWER, n2.core.role());
        new CoreRouter(List.of(n1, n2)).settle(now);
        assertTrue(n1.core.isLeader());
        assertEquals(1, n1.core.term(), "elected in the first term: no split vote");
    }

    // ------------------------------------------------------------ broken connection fast path

    private static AppendEntriesRequest heartbeat(PeerId leader, long term, int failoverTurn) {
        return heartbeat(leader, term).toBuilder().setFailoverTurn(failoverTurn).build();
    }

    private static long slot() {
        return ELECTION_TIMEOUT_MS / 10L;
    }

    /** The first survivor pre-votes as soon as the break is reported, and says the connection broke. */
    @Test
    void brokenConnectionToTheLeaderStartsTheFirstTurnAtOnce() {
        CoreNode f = node(N2, 3);
        f.core.handleAppendEntries(heartbeat(N1, 1, 1), 100);
        assertTrue(f.core.onConnectionLost(N1.endpoint(), 150), "the shell must be told to re-check after the wait");
        assertEquals(0, f.core.campaignDelayAfterBreakMs(), "turn 1 waits for nothing");
        f.core.onConnectionLostGraceElapsed(150);
        assertEquals(2, f.fx.sends().size());
        assertTrue(f.fx.sends().stream().allMatch(s -> s.isPreVote() && s.vote().getLeaderConnectionBroke()), f.fx.sends().toString());
    }

    /**
     * The survivors of a dead leader campaign in the turns the leader gave them, a slot apart;
     * without a turn from the leader (none heard since a restart), in order of id among the
     * survivors (the dead leader does not count).
     */
    @Test
    void survivorsOfABrokenLeaderConnectionCampaignInTheirTurns() {
        for (int turn = 1; turn <= 4; turn++) {
            CoreNode f = node(peer(6 - turn), 5); // turns need not follow ids
            f.core.handleAppendEntries(heartbeat(N1, 1, turn), 100);
            f.core.onConnectionLost(N1.endpoint(), 150);
            assertEquals((turn - 1) * slot(), f.core.campaignDelayAfterBreakMs(), "turn " + turn);
            assertEquals(turn, f.core.election().liveness().knownTurn());
        }
        long[] delays = new long[5];
        for (int i = 2; i <= 5; i++) {
            CoreNode f = node(peer(i), 5);
            f.core.handleAppendEntries(heartbeat(N1, 1), 100);
            f.core.onConnectionLost(N1.endpoint(), 150);
            delays[i - 1] = f.core.campaignDelayAfterBreakMs();
        }
        for (int i = 1; i < 5; i++) {
            assertEquals((i - 1) * slot(), delays[i], "without a turn, survivor n" + (i + 1) + " goes by id");
        }
        CoreNode followerOfN3 = node(N1, 3); // here n3 leads: n1 and n2 survive, n1 first
        followerOfN3.core.handleAppendEntries(heartbeat(N3, 1), 100);
        followerOfN3.core.onConnectionLost(N3.endpoint(), 150);
        assertEquals(0, followerOfN3.core.campaignDelayAfterBreakMs(), "the dead leader does not count");
    }

    /**
     * The first survivor campaigns at once; its peer, which hears of the break 40 ms later, holds
     * its pre-vote answer and grants it once it saw the break itself and the hold (half a grace plus a margin) passed since
     * the leader last spoke (the lease hold): one pre-vote and one vote elect it, no split vote.
     */
    @Test
    void firstSurvivorIsElectedByAPeerThatHeardOfTheBreakLater() {
        CoreNode n2 = node(N2, 3);
        CoreNode n3 = node(N3, 3);
        n2.core.handleAppendEntries(heartbeat(N1, 1, 1), 100);
        n3.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        n2.core.onConnectionLost(N1.endpoint(), 110);
        n2.core.onConnectionLostGraceElapsed(110 + n2.core.campaignDelayAfterBreakMs());
        RequestVoteRequest pre = n2.fx.takeOutbox().stream().filter(s -> s.to().equals(N3)).findFirst().orElseThrow().vote();

        java.util.concurrent.CompletableFuture<RequestVoteResponse> answer = new java.util.concurrent.CompletableFuture<>();
        assertNull(n3.core.handleRequestVote(pre, 111, answer::complete), "n3 has not seen the break: it holds its answer");
        n3.core.onConnectionLost(N1.endpoint(), 150);
        n3.fx.drain();
        assertFalse(answer.isDone(), "granted before the lease hold (half a grace after the leader last spoke) passed");
        long holdEnds = 100 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50; // half a grace plus a 2% margin after the last heartbeat
        assertTrue(n3.fx.wakes.contains(holdEnds), "no wake-up asked for the end of the hold: " + n3.fx.wakes);
        n3.core.onWake(holdEnds);
        n3.fx.drain();
        assertTrue(answer.join().getGranted(), answer.join().toString());

        n2.core.handleRequestVoteResponse(N3, pre, answer.join(), holdEnds);
        new CoreRouter(List.of(n2, n3)).settle(holdEnds);
        assertTrue(n2.core.isLeader(), "n2 is " + n2.core.role());
        assertEquals(2, n2.core.term(), "elected in the first term tried");
        assertEquals(N2, n3.core.leader());
        n3.core.onConnectionLostGraceElapsed(150 + n3.core.campaignDelayAfterBreakMs());
        assertEquals(2, n3.core.term(), "n3's own turn came after it voted: it must not campaign");
    }

    /**
     * The vote-path warm-up's probe (a pre-vote for term 0) is refused at once and changes
     * nothing: not on a fresh node, nor on a follower that lost its leader and would hold or
     * grant a real pre-vote, nor on the leader.
     */
    @Test
    void aPreVoteForTermZeroIsRefusedAndChangesNothing() {
        RequestVoteRequest probe = voteRequest(N2, 0, 0, 0, true);
        CoreNode fresh = node(N1, 3);
        var held = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        RequestVoteResponse a = fresh.core.handleRequestVote(probe, 10, held::complete);
        assertFalse(a.getGranted(), a.toString());
        assertEquals(0, fresh.core.term());
        assertNull(fresh.core.votedFor());

        CoreNode follower = node(N3, 3);
        follower.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        follower.core.onConnectionLost(N1.endpoint(), 110);
        follower.fx.drain();
        RequestVoteResponse b = follower.core.handleRequestVote(probe, 115, held::complete);
        assertFalse(b.getGranted(), "a probe is answered at once, never held: " + b);
        assertEquals(0, follower.core.election().heldVotes());
        assertEquals(1, follower.core.term());
        assertEquals(N1, follower.core.leader());
        assertTrue(follower.fx.takeOutbox().isEmpty(), "a probe made the follower campaign");
        assertFalse(held.isDone());
    }

    /**
     * A candidate's own vote is one of its election quorum, so its own hold after the leader's
     * last heartbeat must pass too: the leader's lease may rest on this node's acknowledgement
     * alone (the other voter missed that heartbeat and backs a candidate earlier). A won pre-vote
     * turns into a candidacy only at the end of that hold.
     */
    @Test
    void aWonPreVoteBecomesACandidacyOnlyOnceTheCandidatesOwnHoldPassed() {
        CoreNode n2 = node(N2, 3);
        n2.core.handleAppendEntries(heartbeat(N1, 1, 1), 100);
        n2.core.onConnectionLost(N1.endpoint(), 110);
        n2.core.onConnectionLostGraceElapsed(110);
        RequestVoteRequest pre = n2.fx.takeOutbox().stream().filter(x -> x.to().equals(N3)).findFirst().orElseThrow().vote();
        // n3 last heard the leader a heartbeat earlier: its hold is over, it grants at once
        n2.core.handleRequestVoteResponse(N3, pre, RequestVoteResponse.newBuilder().setTerm(1).setPreVote(true).setGranted(true).build(), 111);
        n2.fx.drain();
        assertEquals(Role.FOLLOWER, n2.core.role(), "became candidate within the lease its own acknowledgement may back");
        assertEquals(1, n2.core.term());
        long holdEnds = 100 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50;
        assertTrue(n2.fx.wakes.contains(holdEnds), "no wake-up asked for the end of its own hold: " + n2.fx.wakes);
        n2.core.onConnectionLostGraceElapsed(120); // a later check must not restart the won round
        assertTrue(n2.fx.takeOutbox().isEmpty(), "the won pre-vote was asked again");

        n2.core.onWake(holdEnds);
        assertEquals(Role.CANDIDATE, n2.core.role());
        assertEquals(2, n2.core.term());
        assertTrue(n2.fx.takeOutbox().stream().noneMatch(RecordingEffects.Send::isPreVote), "the vote round asks for real votes");
    }

    @Test
    void aWonPreVoteWaitingForTheOwnHoldEndsWhenTheLeaderSpeaks() {
        CoreNode n2 = node(N2, 3);
        n2.core.handleAppendEntries(heartbeat(N1, 1, 1), 100);
        n2.core.onConnectionLost(N1.endpoint(), 110);
        n2.core.onConnectionLostGraceElapsed(110);
        RequestVoteRequest pre = n2.fx.takeOutbox().stream().filter(x -> x.to().equals(N3)).findFirst().orElseThrow().vote();
        n2.core.handleRequestVoteResponse(N3, pre, RequestVoteResponse.newBuilder().setTerm(1).setPreVote(true).setGranted(true).build(), 111);
        n2.core.handleAppendEntries(heartbeat(N1, 1, 1), 150); // the connection only flapped
        n2.core.onWake(100 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50);
        assertEquals(Role.FOLLOWER, n2.core.role());
        assertEquals(1, n2.core.term(), "campaigned against a leader it heard");
    }

    /**
     * The leader ranks the other voters for the next failover once per heartbeat round: most of
     * the log first, then lower id; a read round neither re-ranks nor counts for the lease.
     */
    @Test
    void theLeaderHandsOutFailoverTurnsByLogPositionThenId() {
        List<CoreNode> nodes = List.of(node(N1, 4), node(N2, 4), node(N3, 4), node(peer(4), 4));
        CoreRouter net = new CoreRouter(nodes);
        CoreNode leader = nodes.get(0);
        leader.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        net.settle(ELECTION_TIMEOUT_MS);
        assertTrue(leader.core.isLeader());
        net.cut.add(N2); // n2 falls behind
        leader.core.propose(List.of(com.google.protobuf.ByteString.copyFromUtf8("x")), ELECTION_TIMEOUT_MS + 1);
        net.settle(ELECTION_TIMEOUT_MS + 1);
        net.cut.clear();

        leader.core.onHeartbeatTimeout(ELECTION_TIMEOUT_MS + 2);
        java.util.Map<PeerId, Integer> turns = new java.util.HashMap<>();
        AppendEntriesRequest toN4 = null;
        for (RecordingEffects.Send s : leader.fx.takeOutbox()) {
            if (s.isAppend() && s.append().getHeartbeat()) {
                assertFalse(s.append().getReadRound());
                turns.put(s.to(), s.append().getFailoverTurn());
                toN4 = s.to().equals(peer(4)) ? s.append() : toN4;
            }
        }
        assertEquals(java.util.Map.of(N3, 1, peer(4), 2, N2, 3), turns, "n3 and n4 hold more of the log than n2; n3 has the lower id");
        nodes.get(3).core.handleAppendEntries(toN4, ELECTION_TIMEOUT_MS + 3);
        assertEquals(2, nodes.get(3).core.election().liveness().knownTurn());
    }

    // ------------------------------------------------------------ held pre-vote answers

    /**
     * A survivor ahead of the candidate refuses it (it lacks entries) during its own hold after
     * the break, and campaigns as soon as the hold ends rather than at its own turn (with turn 3
     * or later, or no turn, that is later). The refused request counts as the candidate's pre-vote
     * for it ({@link ImpliedPreVote}): with its own that is a quorum of three, so it asks for real
     * votes straight away.
     */
    @Test
    void aVoterAheadCampaignsWhenItsHoldEndsAfterRefusingACandidateBehind() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        ahead.core.onConnectionLost(N1.endpoint(), 110);
        RequestVoteRequest behind = behindFoundLeaderGone();
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        assertFalse(ahead.core.handleRequestVote(behind, 112, answer::complete).getGranted(), "a candidate missing entry 2 must not win");
        assertTrue(ahead.fx.sends().isEmpty(), "campaigned before its hold ended");
        long holdEnds = 100 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50;
        ahead.fx.drain();
        assertTrue(ahead.fx.wakes.contains(holdEnds), "no wake-up at the end of the hold: " + ahead.fx.wakes);
        ahead.core.onWake(holdEnds);
        assertCampaignsInTerm2CountingTheRefusedRequest(ahead);
    }


    /** The same when the candidate's pre-vote arrives just before this voter sees the break itself. */
    @Test
    void aVoterAheadThatSeesTheBreakJustAfterRefusingACandidateBehindCampaignsWhenItsHoldEnds() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        RequestVoteRequest behind = behindFoundLeaderGone();
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        // the break reaches this voter 80 ms after the last heartbeat, so its own turn (a slot later) comes after its hold
        assertFalse(ahead.core.handleRequestVote(behind, 180, answer::complete).getGranted(), "a candidate missing entry 2 must not win");
        ahead.core.onConnectionLost(N1.endpoint(), 182);
        assertTrue(ahead.fx.sends().isEmpty(), "campaigned before its hold ended");
        long holdEnds = 100 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50;
        ahead.fx.drain();
        assertTrue(ahead.fx.wakes.contains(holdEnds), "no wake-up at the end of the hold: " + ahead.fx.wakes);
        assertTrue(holdEnds < 182 + ahead.core.campaignDelayAfterBreakMs(), "the hold must end before its own turn for this test to mean anything");
        ahead.core.onWake(holdEnds);
        assertCampaignsInTerm2CountingTheRefusedRequest(ahead);
    }

    /** A break seen long after a candidate behind asked is a new failure: the turns decide again. */
    @Test
    void anOldRefusalOfACandidateBehindDoesNotAdvanceALaterCampaign() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        RequestVoteRequest behind = voteRequest(N2, 2, 1, 1, true).toBuilder().setLeaderConnectionBroke(true).build();
        ahead.core.handleRequestVote(behind, 110, new java.util.concurrent.CompletableFuture<RequestVoteResponse>()::complete);
        ahead.core.handleAppendEntries(heartbeat(N1, 1, 2), 500);
        ahead.core.onConnectionLost(N1.endpoint(), 505);
        ahead.fx.drain();
        long holdEnds = 500 + GRACE_MS / 2 + ELECTION_TIMEOUT_MS / 50;
        ahead.core.onWake(holdEnds);
        assertTrue(ahead.fx.sends().isEmpty(), "campaigned before its turn on an old refusal");
    }

    /**
     * After granting a vote a node refuses pre-votes for half a timeout, so its candidate can win
     * and announce itself; once the elected leader spoke that election is over, and a survivor of
     * that leader's death is backed at once (the first failover after an election waited out the
     * rest of the half timeout and a retry: 200-350 ms in the simulation).
     */
    @Test
    void aPreVoteSoonAfterAVoteIsBackedOnceTheElectedLeaderSpoke() {
        CoreNode voter = node(N3, 3);
        assertTrue(voter.core.handleRequestVote(voteRequest(N1, 1, 0, 0, false), ELECTION_TIMEOUT_MS).getGranted());
        RequestVoteRequest other = voteRequest(N2, 2, 0, 0, true);
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), ELECTION_TIMEOUT_MS + 5);
        voter.core.onConnectionLost(N1.endpoint(), ELECTION_TIMEOUT_MS + 200);
        assertTrue(voter.core.handleRequestVote(other, ELECTION_TIMEOUT_MS + 200).getGranted(),
                "n1 won and spoke; its death is news, not a disruption");

        CoreNode justVoted = node(N3, 3);
        assertTrue(justVoted.core.handleRequestVote(voteRequest(N1, 1, 0, 0, false), ELECTION_TIMEOUT_MS).getGranted());
        assertFalse(justVoted.core.handleRequestVote(other.toBuilder().setTerm(2).build(), ELECTION_TIMEOUT_MS + 200).getGranted(),
                "n1 has not announced itself yet: give it time");
    }


    private static RequestVoteRequest brokePreVote(PeerId candidate) {
        return voteRequest(candidate, 2, 0, 0, true).toBuilder().setLeaderConnectionBroke(true).build();
    }

    @Test
    void heldPreVoteIsGrantedWhenTheVoterSeesTheBreakItself() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 250, answer::complete));
        assertEquals(1, voter.core.election().heldVotes());
        voter.fx.drain();
        assertFalse(answer.isDone());

        voter.core.onConnectionLost(N1.endpoint(), 260); // past the lease hold already: grants at once
        voter.fx.drain();
        assertTrue(answer.isDone() && answer.join().getGranted() && answer.join().getPreVote(), String.valueOf(answer.getNow(null)));
        assertEquals(0, voter.core.election().heldVotes());
        // and the real vote that follows passes the disruptive-server guard the same way
        assertTrue(voter.core.handleRequestVote(voteRequest(N2, 2, 0, 0, false), 262).getGranted());
    }

    @Test
    void heldPreVoteIsRefusedWhenTheLeaderSpeaks() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 150, answer::complete));
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), 170);
        voter.fx.drain();
        assertTrue(answer.isDone() && !answer.join().getGranted(), "the leader spoke: " + answer.getNow(null));
        voter.core.onConnectionLost(N1.endpoint(), 175); // a late report of an old break changes nothing
        assertEquals(0, voter.core.election().heldVotes());
    }

    @Test
    void heldPreVoteIsRefusedAtTheEndOfTheWindow() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        assertNull(voter.core.handleRequestVote(brokePreVote(N2), 150, answer::complete));
        long windowEnds = 150 + ELECTION_TIMEOUT_MS / 20;
        voter.fx.drain();
        assertTrue(voter.fx.wakes.contains(windowEnds), "no wake-up asked for the end of the window: " + voter.fx.wakes);
        voter.core.onWake(windowEnds - 1);
        voter.fx.drain();
        assertFalse(answer.isDone(), "decided before the window ended");
        voter.core.onWake(windowEnds);
        voter.fx.drain();
        assertTrue(answer.isDone() && !answer.join().getGranted(), "no break seen within the window: " + answer.getNow(null));
    }

    @Test
    void preVoteWithoutABreakFarFromTheVotersTimeoutIsRefusedAtOnce() {
        CoreNode voter = node(N3, 3);
        voter.core.handleAppendEntries(heartbeat(N1, 1, 2), 100);
        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        RequestVoteResponse r = voter.core.handleRequestVote(voteRequest(N2, 2, 0, 0, true), 500, answer::complete);
        assertFalse(r.getGranted(), "a candidate that only feels the leader silent, half a timeout early, is refused at once");
        assertEquals(0, voter.core.election().heldVotes());
    }

    /**
     * Silent leader: turn 1 pre-votes right after its election timeout (plus a small margin), turn
     * 2 a slot later; a voter whose own timeout is a few ms away holds its answer until then.
     */
    @Test
    void silentLeaderIsReplacedInTurnRightAfterTheElectionTimeout() {
        CoreNode first = node(N2, 3);
        CoreNode second = node(N3, 3);
        first.core.handleAppendEntries(heartbeat(N1, 1, 1), 100);
        second.core.handleAppendEntries(heartbeat(N1, 1, 2), 112); // heard the last heartbeat 12 ms later
        long margin = ELECTION_TIMEOUT_MS / 100;
        long firstTurn = 100 + ELECTION_TIMEOUT_MS + margin;
        first.fx.drain();
        assertTrue(first.fx.wakes.contains(firstTurn), "turn 1 asked for no wake-up at its turn: " + first.fx.wakes);
        second.fx.drain();
        assertTrue(second.fx.wakes.contains(112 + ELECTION_TIMEOUT_MS + margin + slot()), "turn 2: " + second.fx.wakes);

        first.core.onElectionTimeout(firstTurn - 1); // the randomised timer does not run ahead of the turn
        first.core.onWake(firstTurn - 1);
        assertTrue(first.fx.sends().isEmpty(), "campaigned before its turn");
        first.core.onWake(firstTurn);
        RequestVoteRequest pre = first.fx.takeOutbox().stream().filter(s -> s.to().equals(N3)).findFirst().orElseThrow().vote();
        assertFalse(pre.getLeaderConnectionBroke());

        var answer = new java.util.concurrent.CompletableFuture<RequestVoteResponse>();
        assertNull(second.core.handleRequestVote(pre, firstTurn, answer::complete), "its own timeout passes within the window: hold");
        second.core.onWake(112 + ELECTION_TIMEOUT_MS);
        second.fx.drain();
        assertTrue(answer.join().getGranted(), answer.join().toString());
        // n3 backed n2's pre-vote: its own turn waits rather than compete
        second.core.onWake(112 + ELECTION_TIMEOUT_MS + margin + slot());
        assertTrue(second.fx.sends().isEmpty(), "the second turn competed with the first: " + second.fx.sends());
    }

    /**
     * The election timer fires at random moments; acting on the reported break there would start
     * a later-ranked survivor next to the first and invite a split vote. Only the timeout counts.
     */
    @Test
    void electionTimerDoesNotStartALaterRankedSurvivorEarly() {
        CoreNode n3 = node(N3, 3);
        n3.core.handleAppendEntries(heartbeat(N1, 1), 100);
        n3.core.onConnectionLost(N1.endpoint(), 150);
        long turn = 150 + n3.core.campaignDelayAfterBreakMs();

        n3.core.onElectionTimeout(turn - 1);
        assertTrue(n3.fx.sends().isEmpty(), "started before its turn: " + n3.fx.sends());

        n3.core.onConnectionLostGraceElapsed(turn);
        assertEquals(2, n3.fx.sends().size());
    }

    @Test
    void ownTurnDoesNotRestartAPreVoteStartedForAPeerBehind() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        ahead.core.onConnectionLost(N1.endpoint(), 150);
        ahead.core.handleRequestVote(voteRequest(N2, 2, 1, 1, true), 150 + GRACE_MS * 3 / 4);
        int sent = ahead.fx.sends().size();
        assertEquals(2, sent, "the voter ahead starts its own pre-vote at once");

        ahead.core.onConnectionLostGraceElapsed(150 + ahead.core.campaignDelayAfterBreakMs());
        assertEquals(sent, ahead.fx.sends().size(), "its own turn restarted the pre-vote still waiting for answers");
    }

    @Test
    void electionTimeoutDoesNotRestartAPreVoteWaitingForAnswers() {
        CoreNode n = node(N1, 3);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        assertEquals(2, n.fx.sends().size());

        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS + 300);
        assertEquals(2, n.fx.sends().size(), "the round still waiting for answers was started again: " + n.fx.sends());
    }

    @Test
    void brokenConnectionToANonLeaderDoesNothing() {
        CoreNode f = node(N2, 3);
        f.core.handleAppendEntries(heartbeat(N1, 1), 100);
        assertFalse(f.core.onConnectionLost(N3.endpoint(), 150));
        f.core.onConnectionLostGraceElapsed(150 + GRACE_MS);
        f.core.onElectionTimeout(150 + GRACE_MS);
        assertTrue(f.fx.sends().isEmpty());
        assertFalse(f.core.election().liveness().leaderLost(150 + GRACE_MS));
    }

    @Test
    void contactFromTheLeaderAfterTheBreakCancelsTheFastPath() {
        CoreNode f = node(N2, 3);
        f.core.handleAppendEntries(heartbeat(N1, 1), 100);
        f.core.onConnectionLost(N1.endpoint(), 150);
        f.core.handleAppendEntries(heartbeat(N1, 1), 200); // reconnected
        f.core.onConnectionLostGraceElapsed(150 + GRACE_MS);
        assertTrue(f.fx.sends().isEmpty(), "campaigned although the leader spoke after the break");
        assertFalse(f.core.election().liveness().leaderLost(150 + GRACE_MS));
    }

    @Test
    void fastPathPreVoteIsGrantedOnlyByVotersThatLostTheLeaderToo() {
        CoreNode lostToo = node(N3, 3);
        lostToo.core.handleAppendEntries(heartbeat(N1, 1), 100);
        lostToo.core.onConnectionLost(N1.endpoint(), 150);
        CoreNode stillHears = node(N3, 3);
        stillHears.core.handleAppendEntries(heartbeat(N1, 1), 100);

        RequestVoteRequest pre = voteRequest(N2, 2, 0, 0, true);
        assertTrue(lostToo.core.handleRequestVote(pre, 150 + GRACE_MS).getGranted());
        assertFalse(stillHears.core.handleRequestVote(pre, 150 + GRACE_MS).getGranted());
    }

    /**
     * Raft §5.2: granting a vote restarts a follower's wait. A follower whose connection to the
     * old leader broke, and which then voted for a new candidate, must not start a pre-vote when
     * its (jittered) grace timer fires a moment later: that deposes the leader it just elected.
     * Seen in FailoverSimulationTest (seed 3, 3 nodes, T=1000, killed, round 9).
     */
    @Test
    void grantingAVoteCancelsTheBrokenConnectionFastPath() {
        CoreNode f = node(N1, 3);
        f.core.handleAppendEntries(heartbeat(N2, 1), 100);
        f.core.onConnectionLost(N2.endpoint(), 150);
        assertTrue(f.core.handleRequestVote(voteRequest(N3, 2, 0, 0, false), 150 + GRACE_MS).getGranted());
        f.core.onConnectionLostGraceElapsed(150 + GRACE_MS + 8);
        assertTrue(f.fx.sends().isEmpty(), "started a pre-vote right after voting for n3: " + f.fx.sends());
        assertFalse(f.core.election().liveness().leaderLost(150 + GRACE_MS + 8), "the broken connection of the term-1 leader still counts after voting in term 2");
    }

    /**
     * Failover under load: the followers' logs usually differ by a few entries when the leader
     * dies. If the one behind fires first, it cannot win; the one ahead, refusing it, campaigns
     * at once instead of waiting for its own timer (chaos runs: half the rounds waited for it).
     */
    @Test
    void aVoterAheadOfAPreVoteCandidateCampaignsAtOnce() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        ahead.core.onConnectionLost(N1.endpoint(), 150);
        int before = ahead.fx.sends().size();

        RequestVoteResponse r = ahead.core.handleRequestVote(behindFoundLeaderGone(), 150 + GRACE_MS);
        assertFalse(r.getGranted(), "a candidate missing entry 2 must not win");
        List<RecordingEffects.Send> sent = ahead.fx.sends().subList(before, ahead.fx.sends().size());
        assertEquals(2, sent.size(), "the voter ahead campaigns itself: " + sent);
        assertTrue(sent.stream().noneMatch(RecordingEffects.Send::isPreVote), "the refused request already was n2's pre-vote: " + sent);
        assertEquals(2, sent.get(0).vote().getLastLogIndex());
        assertEquals(2, sent.get(0).vote().getTerm());

        // A second refusal while that round is open does not start another one.
        ahead.core.handleRequestVote(behindFoundLeaderGone(), 150 + GRACE_MS + 1);
        assertEquals(before + 2, ahead.fx.sends().size());

        // n2, whose own hold passed too, grants the real vote: the voter ahead leads.
        ahead.core.handleRequestVoteResponse(N2, sent.get(0).vote(), RequestVoteResponse.newBuilder().setTerm(2).setGranted(true).build(),
                150 + GRACE_MS + 5);
        assertTrue(ahead.core.isLeader());
    }

    /**
     * In a group of five the refused request of a candidate behind is one pre-vote besides our
     * own, not a quorum: the voter ahead still asks the others when its turn comes, and one more
     * grant makes three.
     */
    @Test
    void aRefusedRequestFromBehindIsOnlyOnePreVoteInAGroupOfFive() {
        CoreNode ahead = aheadThatSawTheBreakAt150(5);
        int before = ahead.fx.sends().size();
        assertFalse(ahead.core.handleRequestVote(behindFoundLeaderGone(), 150 + GRACE_MS).getGranted());
        assertEquals(before, ahead.fx.sends().size(), "with five, n2 may win without us: the voter ahead keeps its turn");
        ahead.core.election().startPreVote(150 + GRACE_MS + 1); // its turn comes
        List<RecordingEffects.Send> sent = assertPreVotesSentSince(ahead, before, 4, "two of five is no quorum: it asks everyone");
        RequestVoteRequest pre = sent.get(0).vote();
        RequestVoteResponse yes = RequestVoteResponse.newBuilder().setTerm(1).setGranted(true).setPreVote(true).build();
        ahead.core.handleRequestVoteResponse(peer(4), pre, yes, 150 + GRACE_MS + 3);
        assertEquals(Role.CANDIDATE, ahead.core.role(), "itself, n2 (its refused request) and n4 are three of five");
    }

    /** A refused request from behind counts only for the next term and while it is fresh (half an election timeout). */
    @Test
    void aStaleRefusedRequestFromBehindIsNotCountedAsAPreVote() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        // asked (after our last contact with the leader): refused, no campaign, but kept
        assertFalse(ahead.core.handleRequestVote(behindFoundLeaderGone(), 200).getGranted());
        ahead.fx.drain();
        int before = ahead.fx.sends().size();
        long late = 200 + ELECTION_TIMEOUT_MS / 2 + 1;
        ahead.core.onElectionTimeout(Math.max(late, 100 + ELECTION_TIMEOUT_MS));
        assertPreVotesSentSince(ahead, before, 2, "the election timeout starts a pre-vote; a request older than half a timeout must not count");
    }

    /**
     * A request left over from before the leader last spoke is not counted: the asker's belief was
     * about an earlier failure (chaos runs: a restarted node's pre-vote, then a kill within T/2,
     * cost a refused real round and a 350 ms retry).
     */
    @Test
    void aRequestFromBehindThatCameBeforeTheLeaderLastSpokeIsNotCounted() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        assertFalse(ahead.core.handleRequestVote(behindFoundLeaderGone(), 150).getGranted());
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 200);
        ahead.core.onConnectionLost(N1.endpoint(), 250);
        ahead.fx.drain();
        int before = ahead.fx.sends().size();
        ahead.core.election().startPreVote(250 + GRACE_MS);
        assertPreVotesSentSince(ahead, before, 2, "a request from before the last heartbeat counted");
    }

    /** Only a request that says the asker found the leader's process gone counts: its own wait for a flap is over. */
    @Test
    void aRequestFromBehindWithoutTheLeaderFoundGoneIsNotCounted() {
        CoreNode ahead = aheadThatSawTheBreakAt150(3);
        int before = ahead.fx.sends().size();
        RequestVoteRequest brokeOnly = voteRequest(N2, 2, 1, 1, true).toBuilder().setLeaderConnectionBroke(true).build();
        assertFalse(ahead.core.handleRequestVote(brokeOnly, 150 + GRACE_MS).getGranted());
        assertPreVotesSentSince(ahead, before, 2, "the voter ahead campaigns, with a pre-vote round of its own");
    }

    /** n3 of {@code members}, holding entries 1 and 2 of term 1, heard leader n1 at 100 and saw its connection break at 150. */
    private static CoreNode aheadThatSawTheBreakAt150(int members) {
        CoreNode ahead = CoreNode.create(N3, peers(members), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        ahead.core.onConnectionLost(N1.endpoint(), 150);
        ahead.fx.drain();
        return ahead;
    }

    /** What {@code node} sent since its {@code before}-th send: {@code count} pre-vote requests and nothing else. */
    private static List<RecordingEffects.Send> assertPreVotesSentSince(CoreNode node, int before, int count, String why) {
        List<RecordingEffects.Send> sent = List.copyOf(node.fx.sends().subList(before, node.fx.sends().size()));
        assertEquals(count, sent.size(), why + ": " + sent);
        assertTrue(sent.stream().allMatch(RecordingEffects.Send::isPreVote), why + ": " + sent);
        return sent;
    }

    /** n2's pre-vote for term 2 (log 1/1, behind a voter holding entry 2): it saw the leader's connection break and its process gone. */
    private static RequestVoteRequest behindFoundLeaderGone() {
        return voteRequest(N2, 2, 1, 1, true).toBuilder().setLeaderConnectionBroke(true).setLeaderProcessGone(true).build();
    }

    private static void assertCampaignsInTerm2CountingTheRefusedRequest(CoreNode ahead) {
        assertEquals(2, ahead.fx.sends().size(), "did not campaign when its hold ended");
        assertTrue(ahead.fx.sends().stream().noneMatch(RecordingEffects.Send::isPreVote), "the refused request already was n2's pre-vote");
        assertTrue(ahead.fx.sends().stream().allMatch(s -> s.vote().getTerm() == 2));
        assertEquals(Role.CANDIDATE, ahead.core.role());
    }

    @Test
    void aVoterThatStillHearsItsLeaderDoesNotCampaignOnAPreVoteFromBehind() {
        CoreNode ahead = CoreNode.create(N3, peers(3), 1, new long[] {1, 1}, 0);
        ahead.core.handleAppendEntries(heartbeat(N1, 1), 100);
        int before = ahead.fx.sends().size();
        assertFalse(ahead.core.handleRequestVote(voteRequest(N2, 2, 1, 1, true), 200).getGranted());
        assertEquals(before, ahead.fx.sends().size(), "campaigned against a live leader: " + ahead.fx.sends());
    }
}
