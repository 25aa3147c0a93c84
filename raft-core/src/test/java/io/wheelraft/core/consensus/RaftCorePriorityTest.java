package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Election priorities in the pure core: priority 0 never campaigns, is refused by voters whose
 * configuration says so and is never a transfer target; followers advertise their own priority;
 * the leader ranks failover turns by priority and hands leadership to a caught-up voter of
 * strictly higher priority, backing off after a failed attempt; a follower without a turn waits
 * for the voters it knows are preferred, and still campaigns when they are gone.
 */
class RaftCorePriorityTest {

    private static final long T = ELECTION_TIMEOUT_MS;
    private static final long SLOT = T / 10;
    private static final long[] EMPTY = {};
    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final PeerId N4 = peer(4);
    private static final String THREE = "n1:7001,n2:7002,n3:7003";

    /** A node of configuration {@code conf} whose own options give it election priority {@code option}. */
    private static CoreNode node(PeerId self, String conf, int option) {
        return CoreNode.create(CoreNode.config(self, 4, 64).withElectionPriority(option), Configuration.parse(conf), 0, EMPTY, false, 0);
    }

    private static RequestVoteRequest voteRequest(PeerId candidate, long term, boolean preVote) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term).setPreVote(preVote).build();
    }

    private static TimeoutNowRequest timeoutNow(PeerId from, long term) {
        return TimeoutNowRequest.newBuilder().setGroupId("g").setServerId(from.toString()).setTerm(term).build();
    }

    /** Every TimeoutNow the node sent so far, by addressee. */
    private static List<PeerId> timeoutNowsSent(CoreNode n) {
        return n.fx.sends().stream().filter(s -> s.message() instanceof TimeoutNowRequest).map(RecordingEffects.Send::to).toList();
    }

    /** n1 is elected leader over {@code net} at time T and commits its first entry. */
    private static CoreNode electN1(CoreRouter net) {
        CoreNode leader = net.node(N1);
        leader.core.onElectionTimeout(T);
        net.settle(T);
        assertTrue(leader.core.isLeader(), "n1 did not win: " + leader.core.role());
        assertEquals(leader.core.log().lastIndex(), leader.core.commitIndex(), "n1 did not commit its first entry");
        return leader;
    }

    // ------------------------------------------------------------ priority 0

    @Test
    void aNodeWhoseOptionsSayPriorityZeroNeverStartsAPreVote() {
        CoreNode n = node(N1, THREE, 0);
        n.core.onElectionTimeout(T);
        n.core.onElectionTimeout(5 * T);
        n.core.onElectionRetry(6 * T);
        n.core.onWake(7 * T);
        assertTrue(n.fx.sends().isEmpty(), "a priority-0 node asked for votes: " + n.fx.sends());
        assertEquals(0, n.core.term());
    }

    @Test
    void theConfigurationsZeroOverridesTheOptions() {
        CoreNode n = node(N1, "n1:7001/priority=0,n2:7002,n3:7003", 5);
        n.core.onElectionTimeout(T);
        n.core.onElectionTimeout(5 * T);
        assertTrue(n.fx.sends().isEmpty(), "campaigned against the configuration's priority 0: " + n.fx.sends());
    }

    @Test
    void aPriorityZeroNodeIgnoresTimeoutNow() {
        CoreNode n = node(N2, THREE, 0);
        assertFalse(n.core.handleTimeoutNow(timeoutNow(N1, 0), T).getSuccess());
        assertEquals(0, n.core.term(), "a priority-0 node must not start a term");
        assertEquals(Role.FOLLOWER, n.core.role());
    }

    @Test
    void votersRefuseACandidateTheirConfigurationGivesPriorityZero() {
        CoreNode voter = node(N2, "n1:7001/priority=0,n2:7002,n3:7003", 1);
        RequestVoteResponse pre = voter.core.handleRequestVote(voteRequest(N1, 1, true), 2 * T);
        assertFalse(pre.getGranted(), pre.toString());
        assertTrue(pre.getReason().contains("priority 0"), pre.getReason());
        RequestVoteResponse vote = voter.core.handleRequestVote(voteRequest(N1, 1, false), 2 * T);
        assertFalse(vote.getGranted(), vote.toString());
        assertEquals(0, voter.core.term(), "the refused candidate's term must not be taken up");

        RequestVoteResponse other = voter.core.handleRequestVote(voteRequest(N3, 1, true), 2 * T);
        assertTrue(other.getGranted(), "a candidate of priority 1 is backed as before: " + other);
    }

    @Test
    void transferToAMemberOfPriorityZeroIsRefusedWithAClearMessage() {
        CoreRouter net = new CoreRouter(List.of(node(N1, "n1:7001,n2:7002,n3:7003/priority=0", 1),
                node(N2, "n1:7001,n2:7002,n3:7003/priority=0", 0), node(N3, "n1:7001,n2:7002,n3:7003/priority=0", 1)));
        CoreNode leader = electN1(net);
        for (PeerId target : List.of(N2, N3)) { // n2 by what it advertised, n3 by the configuration
            leader.core.transferLeadership(target, s -> { }, T + 1);
            RecordingEffects.TransferDone done = leader.fx.all(RecordingEffects.TransferDone.class).get(target.equals(N2) ? 0 : 1);
            assertEquals(RaftError.INVALID_ARGUMENT, done.status().code(), done.status().toString());
            assertTrue(done.status().message().contains(target + " never leads: its election priority is 0"), done.status().message());
        }
        assertFalse(leader.core.transferring());
    }

    // ------------------------------------------------------------ advertising and ranking

    @Test
    void followersAdvertiseTheirOwnOptionInEveryAppendEntriesAnswer() {
        CoreNode f = node(N2, "n1:7001,n2:7002/priority=9,n3:7003", 7);
        AppendEntriesRequest hb = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1).setHeartbeat(true).build();
        AppendEntriesResponse ok = f.core.handleAppendEntries(hb, 10).response();
        assertTrue(ok.getSuccess() && ok.hasElectionPriority(), ok.toString());
        assertEquals(7, ok.getElectionPriority(), "the option is advertised; the configuration's value the leader knows already");
        AppendEntriesResponse mismatch = f.core.handleAppendEntries(hb.toBuilder().setPrevLogIndex(5).setPrevLogTerm(1).build(), 11).response();
        assertFalse(mismatch.getSuccess());
        assertEquals(7, mismatch.getElectionPriority());
    }

    @Test
    void theLeaderRanksFailoverTurnsByPriorityFirstAndGivesPriorityZeroNone() {
        String four = "n1:7001,n2:7002,n3:7003,n4:7004";
        CoreRouter net = new CoreRouter(List.of(node(N1, four, 1), node(N2, four, 0), node(N3, four, 1), node(N4, four, 3)));
        CoreNode leader = electN1(net);
        net.cut.add(N4); // n4 falls behind: priority still ranks it first
        leader.core.propose(leader.commands(1), T + 1);
        net.settle(T + 1);
        net.cut.clear();

        leader.core.onHeartbeatTimeout(T + 2);
        Map<PeerId, Integer> turns = new HashMap<>();
        for (RecordingEffects.Send s : leader.fx.takeOutbox()) {
            if (s.isAppend() && s.append().getHeartbeat()) {
                turns.put(s.to(), s.append().getFailoverTurn());
            }
        }
        assertEquals(Map.of(N4, 1, N3, 2, N2, 0), turns, "n4 advertises 3; n2 advertises 0 and gets no turn");
        assertTrue(timeoutNowsSent(leader).isEmpty(), "n4 lacks committed entries: no hand-over yet");
    }

    // ------------------------------------------------------------ hand-over

    @Test
    void theLeaderHandsOverToAHigherPriorityVoterOnceItHoldsEverythingCommitted() {
        CoreRouter net = new CoreRouter(List.of(node(N1, THREE, 1), node(N2, THREE, 1), node(N3, THREE, 5)));
        net.cut.add(N3);
        CoreNode leader = electN1(net);
        leader.core.propose(leader.commands(3), T + 1);
        net.settle(T + 1);
        leader.core.onHeartbeatTimeout(T + 2);
        net.settle(T + 2);
        assertTrue(timeoutNowsSent(leader).isEmpty(), "n3 was not heard from");

        net.cut.clear();
        long now = T + 3;
        // The rounds dropped while n3 was cut failed no call here: the next one goes to it once
        // half an election timeout has passed since the last it did not answer.
        for (int i = 0; i < 10 && timeoutNowsSent(leader).isEmpty(); i++, now += SLOT) {
            leader.core.onHeartbeatTimeout(now);
            net.settle(now); // n3 answers (advertising 5) and catches up
        }
        assertEquals(List.of(N3), timeoutNowsSent(leader));
        assertTrue(net.node(N3).core.log().lastIndex() >= leader.core.commitIndex());

        // n3 takes over through the ordinary transfer; the old leader's caller-less transfer ends OK.
        TimeoutNowRequest tn = (TimeoutNowRequest) leader.fx.sends().stream().filter(s -> s.message() instanceof TimeoutNowRequest)
                .findFirst().orElseThrow().message();
        assertTrue(net.node(N3).core.handleTimeoutNow(tn, now).getSuccess());
        net.settle(now);
        assertTrue(net.node(N3).core.isLeader(), "n3 did not win after TimeoutNow");
        assertEquals(Role.FOLLOWER, leader.core.role());
        leader.core.onHeartbeatTimeout(now + 1); // checkTransfer
        assertEquals(io.wheelraft.core.Status.ok().code(), leader.fx.all(RecordingEffects.TransferDone.class).get(0).status().code());

        // The new leader of the highest priority stays: nobody is preferred to it.
        for (long t = now + 2; t < now + 40 * SLOT; t += SLOT) {
            net.node(N3).core.onHeartbeatTimeout(t);
            net.settle(t);
        }
        assertTrue(timeoutNowsSent(net.node(N3)).isEmpty());
    }

    @Test
    void equalPrioritiesNeverPassLeadershipAround() {
        String conf = "n1:7001/priority=5,n2:7002/priority=5,n3:7003";
        CoreRouter net = new CoreRouter(List.of(node(N1, conf, 1), node(N2, conf, 1), node(N3, conf, 1)));
        CoreNode leader = electN1(net);
        for (long t = T + 1; t < T + 100 * SLOT; t += SLOT) {
            leader.core.onHeartbeatTimeout(t);
            net.settle(t);
        }
        assertTrue(timeoutNowsSent(leader).isEmpty(), "handed over to an equal: " + timeoutNowsSent(leader));
        assertTrue(leader.core.isLeader());
    }

    @Test
    void aFailedHandOverIsRetriedOnlyAfterABackOff() {
        CoreRouter net = new CoreRouter(List.of(node(N1, THREE, 1), node(N2, THREE, 6), node(N3, THREE, 1)));
        CoreNode leader = electN1(net);
        List<Long> attempts = new java.util.ArrayList<>();
        for (long t = T + 1; t < T + 8 * T; t += SLOT) {
            int before = timeoutNowsSent(leader).size();
            leader.core.onHeartbeatTimeout(t);
            net.settle(t); // the TimeoutNow is never delivered: n2 never takes over
            if (timeoutNowsSent(leader).size() > before) {
                attempts.add(t);
            }
        }
        assertTrue(leader.core.isLeader());
        assertEquals(3, attempts.size(), "attempts at " + attempts);
        assertTrue(attempts.get(1) - attempts.get(0) >= 2 * T, "second attempt too early: " + attempts);
        assertTrue(attempts.get(2) - attempts.get(1) >= 4 * T, "third attempt too early: " + attempts);
        assertFalse(leader.core.transferring(), "the leader takes tasks again between attempts");
        assertEquals(RaftError.TIMEOUT, leader.fx.all(RecordingEffects.TransferDone.class).get(0).status().code());
    }

    @Test
    void aCommittedPriorityChangeMovesLeadership() {
        CoreRouter net = new CoreRouter(List.of(node(N1, THREE, 1), node(N2, THREE, 1), node(N3, THREE, 1)));
        CoreNode leader = electN1(net);
        leader.core.changeMembership(Configuration.parse(THREE).withPriority(N2, 4), s -> { }, T + 1);
        assertTrue(timeoutNowsSent(leader).isEmpty(), "handed over before the change committed");
        net.settle(T + 1);
        assertEquals(io.wheelraft.core.Status.ok().code(), leader.fx.all(RecordingEffects.ChangeDone.class).get(0).status().code());
        leader.core.onHeartbeatTimeout(T + 2);
        assertEquals(List.of(N2), timeoutNowsSent(leader));
    }

    // ------------------------------------------------------------ followers' waits

    @Test
    void aFollowerWithoutATurnWaitsOneSlotPerPreferredVoterAndThenCampaigns() {
        String conf = "n1:7001,n2:7002/priority=5,n3:7003/priority=5";
        CoreNode low = node(N1, conf, 1);
        low.core.onElectionTimeout(T);
        assertTrue(low.fx.sends().isEmpty(), "campaigned before the preferred voters had their slots");
        low.core.onWake(T + 2 * SLOT - 1);
        assertTrue(low.fx.sends().isEmpty(), "campaigned before the preferred voters had their slots");
        low.core.onWake(T + 2 * SLOT);
        assertEquals(2, low.fx.sends().stream().filter(RecordingEffects.Send::isPreVote).count(),
                "the preferred voters are gone: it must still campaign");

        CoreNode high = node(N2, conf, 1);
        high.core.onElectionTimeout(T);
        assertEquals(2, high.fx.sends().stream().filter(RecordingEffects.Send::isPreVote).count(), "a preferred voter goes at once");
    }

    @Test
    void aLeaderHeardDuringTheWaitCancelsIt() {
        CoreNode low = node(N1, "n1:7001,n2:7002/priority=5,n3:7003", 1);
        low.core.onElectionTimeout(T);
        low.core.handleAppendEntries(AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N2.toString()).setTerm(1)
                .setHeartbeat(true).build(), T + 1);
        low.core.onWake(T + SLOT);
        assertTrue(low.fx.sends().isEmpty(), "campaigned against a leader it hears");
    }

    @Test
    void afterABrokenConnectionWithoutATurnSurvivorsGoInOrderOfPriority() {
        String conf = "n1:7001,n2:7002,n3:7003/priority=4,n4:7004";
        assertEquals(0, node(N3, conf, 1).core.campaignDelayAfterBreakMs());
        assertEquals(SLOT, node(N1, conf, 1).core.campaignDelayAfterBreakMs());
        assertEquals(2 * SLOT, node(N2, conf, 1).core.campaignDelayAfterBreakMs());
        assertEquals(3 * SLOT, node(N4, conf, 1).core.campaignDelayAfterBreakMs());
    }
}
