package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The first election of a fresh group (NodeOptions.fastFirstElection): one voter chosen by the
 * group id campaigns soon after its start without a pre-vote; voters that have never followed a
 * leader grant it within their start hold; nothing changes once a leader was followed or for a
 * node that starts at a term above 0. Also: a round no voter answered waits for the election
 * timer instead of the short retry.
 */
class FastFirstElectionTest {

    private static final long[] EMPTY = {};
    private static final long DELAY_MS = 100;
    /** When a voter not designated may campaign in a fresh group (RaftConfig#freshFirstCampaignGraceMs). */
    private static final long GRACE_END_MS = 3L * ELECTION_TIMEOUT_MS;

    private static CoreNode fresh(String groupId, PeerId self, int members) {
        RaftConfig c = new RaftConfig(groupId, self, ELECTION_TIMEOUT_MS, CoreNode.GRACE_MS, 4, 64, 1 << 20, false, 0);
        CoreNode n = CoreNode.create(c, peers(members), 0, EMPTY, 0);
        n.core.enableFastFirstElection(DELAY_MS, 0);
        return n;
    }

    private static RequestVoteRequest vote(PeerId candidate, long term, boolean preVote) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term)
                .setLastLogIndex(0).setLastLogTerm(0).setPreVote(preVote).build();
    }

    private static AppendEntriesRequest heartbeat(PeerId leader, long term) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(leader.toString()).setTerm(term).setHeartbeat(true).build();
    }

    /** The members of a fresh group of three, and which of them the group id designates (by which one asks to be woken). */
    private static int designatedOf(List<CoreNode> members) {
        int designated = -1;
        for (int i = 0; i < members.size(); i++) {
            if (members.get(i).fx.wakes.contains(DELAY_MS)) {
                assertEquals(-1, designated, "two members of one group campaign first");
                designated = i;
            }
        }
        return designated;
    }

    private static List<CoreNode> group(String groupId) {
        List<CoreNode> members = List.of(fresh(groupId, peer(1), 3), fresh(groupId, peer(2), 3), fresh(groupId, peer(3), 3));
        members.forEach(m -> m.fx.events()); // takes the first batch, with the wake-up asked for
        return members;
    }

    @Test
    void theDesignatedVoterCampaignsAfterTheDelayForTermOneWithoutPreVote() {
        List<CoreNode> members = group("orders-17");
        int d = designatedOf(members);
        assertTrue(d >= 0, "no member of a fresh group campaigns first");
        CoreNode first = members.get(d);
        first.core.onWake(DELAY_MS);
        List<RecordingEffects.Send> sent = first.fx.sends();
        assertEquals(2, sent.size(), sent.toString());
        assertTrue(sent.stream().noneMatch(RecordingEffects.Send::isPreVote), "a fresh group's first round needs no pre-vote: " + sent);
        assertEquals(1, sent.get(0).vote().getTerm());
        assertEquals(Role.CANDIDATE, first.core.role());
        assertEquals(List.of(new RecordingEffects.HardState(1, first.id)), first.fx.all(RecordingEffects.HardState.class),
                "term and own vote are persisted for the candidacy");
        for (int i = 0; i < members.size(); i++) {
            if (i != d) {
                CoreNode other = members.get(i);
                other.core.onElectionTimeout(DELAY_MS);
                assertTrue(other.fx.sends().isEmpty(), "a member not designated campaigned before its election timeout");
                other.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
                assertTrue(other.fx.sends().isEmpty(), "a member not designated campaigned within its grace for the designated one");
                other.core.onElectionTimeout(GRACE_END_MS);
                assertTrue(!other.fx.sends().isEmpty() && other.fx.sends().stream().allMatch(RecordingEffects.Send::isPreVote),
                        "a member not designated campaigns once the grace is over, with a pre-vote: " + other.fx.sends());
                assertEquals(0, other.core.term());
            }
        }
    }

    /**
     * Processes that start thousands of groups start them seconds apart: a voter not designated
     * leaves the first campaign to the designated one for three election timeouts, unless the
     * designated voter's process is reported lost, and it grants votes meanwhile.
     */
    @Test
    void aVoterNotDesignatedWaitsForTheDesignatedOneUnlessItsProcessIsLost() {
        List<CoreNode> members = group("orders-17");
        int d = designatedOf(members);
        CoreNode designated = members.get(d);
        CoreNode waiting = members.get((d + 1) % 3);
        CoreNode other = members.get((d + 2) % 3);

        waiting.core.onElectionTimeout(GRACE_END_MS - 1);
        assertTrue(waiting.fx.sends().isEmpty(), "campaigned within the grace: " + waiting.fx.sends());
        RequestVoteResponse granted = waiting.core.handleRequestVote(vote(other.id, 1, false), GRACE_END_MS - 1);
        assertTrue(granted.getGranted(), "a waiting voter still votes: " + granted.getReason());

        other.core.onPeerSilent(designated.id.endpoint(), ELECTION_TIMEOUT_MS);
        other.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        assertTrue(!other.fx.sends().isEmpty() && other.fx.sends().stream().allMatch(RecordingEffects.Send::isPreVote),
                "with the designated voter's process reported lost, a voter campaigns at its timeout: " + other.fx.sends());
    }

    @Test
    void theDesignatedVoterIsElectedByVotersStillInTheirStartHold() {
        List<CoreNode> members = group("orders-17");
        CoreNode first = members.get(designatedOf(members));
        first.core.onWake(DELAY_MS);
        for (RecordingEffects.Send s : first.fx.takeOutbox()) {
            CoreNode voter = members.stream().filter(m -> m.id.equals(s.to())).findFirst().orElseThrow();
            RequestVoteResponse answer = voter.core.handleRequestVote(s.vote(), DELAY_MS + 5);
            assertTrue(answer.getGranted(), "a voter that never followed a leader refused: " + answer.getReason());
            assertEquals(List.of(new RecordingEffects.HardState(1, first.id)), voter.fx.all(RecordingEffects.HardState.class),
                    "the vote is persisted before it is granted");
            first.core.handleRequestVoteResponse(s.to(), s.vote(), answer, DELAY_MS + 10);
        }
        assertTrue(first.core.isLeader(), "elected within a tenth of the election timeout, yet " + first.core.role());
        assertEquals(1, first.core.term());
    }

    @Test
    void designationAgreesAcrossMembersAndSpreadsLeadersOverThem() {
        int[] designatedCount = new int[3];
        for (int g = 0; g < 300; g++) {
            int d = designatedOf(group(Integer.toString(g)));
            assertTrue(d >= 0, "group " + g + " has no designated first candidate");
            designatedCount[d]++;
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(designatedCount[i] >= 80, "member " + i + " campaigns first in only " + designatedCount[i] + " of 300 groups");
        }
    }

    @Test
    void aVoterThatFollowedALeaderKeepsItsHoldAgainAndPreVoteReturns() {
        CoreNode voter = fresh("g", peer(3), 3);
        voter.core.handleAppendEntries(heartbeat(peer(1), 1), 50);
        RequestVoteResponse preVote = voter.core.handleRequestVote(vote(peer(2), 2, true), 60);
        assertFalse(preVote.getGranted(), "backed a candidate against a leader it heard 10 ms ago");
        RequestVoteResponse real = voter.core.handleRequestVote(vote(peer(2), 2, false), 60);
        assertFalse(real.getGranted(), "voted against a live leader");
        assertEquals(1, voter.core.term(), "a vote request against a live leader changed the term");

        CoreNode candidate = fresh("g", peer(2), 3);
        candidate.core.handleAppendEntries(heartbeat(peer(1), 1), 50);
        candidate.core.onElectionTimeout(50 + ELECTION_TIMEOUT_MS);
        assertTrue(candidate.fx.sends().stream().allMatch(RecordingEffects.Send::isPreVote),
                "after following a leader, a campaign starts with a pre-vote: " + candidate.fx.sends());
    }

    @Test
    void aNodeRestartedAtATermAboveZeroKeepsItsStartHold() {
        RaftConfig c = new RaftConfig("g", peer(3), ELECTION_TIMEOUT_MS, CoreNode.GRACE_MS, 4, 64, 1 << 20, false, 0);
        CoreNode voter = CoreNode.create(c, peers(3), 4, EMPTY, 0);
        voter.core.enableFastFirstElection(DELAY_MS, 0);
        voter.fx.events();
        assertFalse(voter.fx.wakes.contains(DELAY_MS), "a restarted node planned a first campaign");
        RequestVoteResponse answer = voter.core.handleRequestVote(vote(peer(2), 5, false), 50);
        assertFalse(answer.getGranted(), "a node at term 4 may have acknowledged a heartbeat just before restarting: it must hold");
        assertEquals(4, voter.core.term());
    }

    @Test
    void aCandidateAlreadyInTermOneStillPreVotes() {
        List<CoreNode> members = group("orders-17");
        CoreNode first = members.get(designatedOf(members));
        first.core.onWake(DELAY_MS);
        for (RecordingEffects.Send s : first.fx.takeOutbox()) {
            first.core.handleRequestVoteFailure(s.to(), s.vote(), DELAY_MS + 1); // the peers do not host the group yet
        }
        assertEquals(Role.FOLLOWER, first.core.role());
        assertEquals(1, first.core.term());
        first.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        List<RecordingEffects.Send> again = first.fx.takeOutbox();
        assertEquals(2, again.size(), again.toString());
        assertTrue(again.stream().allMatch(RecordingEffects.Send::isPreVote), "a second round must pre-vote: " + again);
        assertEquals(2, again.get(0).vote().getTerm());
    }

    @Test
    void aRoundNoVoterAnsweredWaitsForTheElectionTimerNotTheShortRetry() {
        CoreNode n = CoreNode.create(peer(1), peers(3), 0, EMPTY, 0);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        for (RecordingEffects.Send s : n.fx.takeOutbox()) {
            n.core.handleRequestVoteFailure(s.to(), s.vote(), ELECTION_TIMEOUT_MS + 1);
        }
        assertTrue(n.fx.all(RecordingEffects.ElectionRetry.class).isEmpty(), "retries at once although no voter answered");

        CoreNode m = CoreNode.create(peer(1), peers(3), 0, EMPTY, 0);
        m.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        List<RecordingEffects.Send> round = m.fx.takeOutbox();
        m.core.handleRequestVoteFailure(round.get(0).to(), round.get(0).vote(), ELECTION_TIMEOUT_MS + 1);
        RequestVoteResponse refused = RequestVoteResponse.newBuilder().setTerm(0).setGranted(false).setPreVote(true).build();
        m.core.handleRequestVoteResponse(round.get(1).to(), round.get(1).vote(), refused, ELECTION_TIMEOUT_MS + 2);
        assertEquals(1, m.fx.all(RecordingEffects.ElectionRetry.class).size(), "a refused round (a split vote, a voter a little behind) retries soon");
    }
    /**
     * A voter whose process does not host the group yet (it is still starting its groups) is
     * asked again a tenth of the election timeout later while the round runs; its answer is not
     * a refusal, so the round is not lost to a voter that is merely late.
     */
    @Test
    void aVoterNotHostingTheGroupYetIsAskedAgainAndCanStillElectTheCandidate() {
        List<CoreNode> members = group("orders-17");
        int d = designatedOf(members);
        CoreNode first = members.get(d);
        first.core.onWake(DELAY_MS);
        List<RecordingEffects.Send> round = first.fx.takeOutbox();
        assertEquals(2, round.size());
        for (RecordingEffects.Send s : round) {
            first.core.handleRequestVoteNotHosted(s.to(), s.vote(), DELAY_MS + 5);
        }
        first.fx.events();
        assertEquals(Role.CANDIDATE, first.core.role(), "the round was lost to voters that only had not started the group");
        long due = DELAY_MS + 5 + ELECTION_TIMEOUT_MS / 10;
        assertTrue(first.fx.wakes.contains(due), "no wake-up asked for the second ask: " + first.fx.wakes);

        first.core.onWake(due);
        List<RecordingEffects.Send> again = first.fx.takeOutbox();
        assertEquals(round.stream().map(RecordingEffects.Send::to).toList(), again.stream().map(RecordingEffects.Send::to).toList());
        assertEquals(round.get(0).vote(), again.get(0).vote(), "the same request of the same round");

        CoreNode voter = members.stream().filter(m -> m.id.equals(again.get(0).to())).findFirst().orElseThrow();
        RequestVoteResponse grant = voter.core.handleRequestVote(again.get(0).vote(), due + 1);
        assertTrue(grant.getGranted());
        first.core.handleRequestVoteResponse(voter.id, again.get(0).vote(), grant, due + 2);
        assertEquals(Role.LEADER, first.core.role());
    }

    @Test
    void aNotHostedAnswerToARoundThatEndedAsksNothingAgain() {
        CoreNode n = CoreNode.create(peer(1), peers(3), 0, EMPTY, 0);
        n.core.onElectionTimeout(ELECTION_TIMEOUT_MS);
        List<RecordingEffects.Send> round = n.fx.takeOutbox();
        n.core.handleRequestVoteNotHosted(round.get(0).to(), round.get(0).vote(), ELECTION_TIMEOUT_MS + 1);
        // A leader of term 1 speaks: the pre-vote round is moot.
        n.core.handleAppendEntries(heartbeat(peer(2), 1), ELECTION_TIMEOUT_MS + 2);
        n.fx.events();
        n.core.onWake(ELECTION_TIMEOUT_MS + 1 + ELECTION_TIMEOUT_MS / 10);
        assertTrue(n.fx.takeOutbox().stream().noneMatch(RecordingEffects.Send::isPreVote), "asked again for a round that ended");
    }
    @Test
    void roundsThatKeepFailingBackOffAndALeaderHeardResetsIt() {
        CoreNode n = CoreNode.create(peer(1), peers(3), 0, EMPTY, 0);
        RequestVoteResponse refused = RequestVoteResponse.newBuilder().setTerm(0).setGranted(false).setPreVote(true).build();
        List<Integer> factors = new java.util.ArrayList<>();
        long now = ELECTION_TIMEOUT_MS;
        for (int round = 0; round < 5; round++) {
            now += 2 * ELECTION_TIMEOUT_MS;
            n.core.onElectionTimeout(now);
            for (RecordingEffects.Send s : n.fx.takeOutbox()) {
                n.core.handleRequestVoteResponse(s.to(), s.vote(), refused, now + 1);
            }
            factors.add(n.core.electionBackoff());
        }
        assertEquals(List.of(1, 2, 4, 8, 8), factors, "one failed round waits as usual, then doubling up to 8");
        n.core.handleAppendEntries(heartbeat(peer(2), 1), now + 2);
        assertEquals(1, n.core.electionBackoff(), "a leader heard ends the backoff");
    }
}
