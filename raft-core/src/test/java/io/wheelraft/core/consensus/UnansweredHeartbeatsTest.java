package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower that has not answered the last heartbeat-timer round gets no further one for half
 * an election timeout: on a process too busy to answer, each round sent meanwhile would only wait
 * behind the others as a pending call. One that answers gets the next round as usual; read rounds
 * always go.
 */
class UnansweredHeartbeatsTest {

    private static final long[] EMPTY = {};
    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long START = 1000;

    private static CoreNode leader() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, EMPTY, 0);
        leader.electByHand(START);
        leader.fx.takeOutbox();
        return leader;
    }

    private static List<AppendEntriesRequest> heartbeats(CoreNode leader) {
        return leader.fx.takeOutbox().stream().filter(RecordingEffects.Send::isAppend).map(RecordingEffects.Send::append)
                .filter(AppendEntriesRequest::getHeartbeat).toList();
    }

    private static List<String> to(List<AppendEntriesRequest> heartbeats) {
        return heartbeats.stream().map(AppendEntriesRequest::getPeerId).sorted().toList();
    }

    private static void answer(CoreNode leader, AppendEntriesRequest hb, long nowMs) {
        leader.core.handleAppendEntriesResponse(PeerId.parse(hb.getPeerId()), hb, AppendEntriesResponse.newBuilder()
                .setTerm(hb.getTerm()).setSuccess(true).setLastLogIndex(hb.getPrevLogIndex()).build(), nowMs);
    }

    @Test
    void aFollowerOwingAnAnswerGetsNoRoundUntilHalfAnElectionTimeoutPassed() {
        CoreNode leader = leader();
        leader.core.onHeartbeatTimeout(START + 100);
        List<AppendEntriesRequest> first = heartbeats(leader);
        assertEquals(List.of(N2.toString(), N3.toString()), to(first));

        answer(leader, first.stream().filter(hb -> hb.getPeerId().equals(N2.toString())).findFirst().orElseThrow(), START + 150);
        leader.core.onHeartbeatTimeout(START + 200);
        assertEquals(List.of(N2.toString()), to(heartbeats(leader)), "n3 has not answered the last round: it gets none");

        leader.core.onHeartbeatTimeout(START + 100 + ELECTION_TIMEOUT_MS / 2 - 1);
        assertTrue(to(heartbeats(leader)).stream().noneMatch(p -> p.equals(N3.toString())), "still within half an election timeout");
        leader.core.onHeartbeatTimeout(START + 100 + ELECTION_TIMEOUT_MS / 2);
        assertTrue(to(heartbeats(leader)).contains(N3.toString()), "half an election timeout without an answer: it gets a round again");
    }

    @Test
    void aFailedHeartbeatDoesNotHoldBackTheNextRound() {
        CoreNode leader = leader();
        leader.core.onHeartbeatTimeout(START + 100);
        for (AppendEntriesRequest hb : heartbeats(leader)) {
            leader.core.handleAppendEntriesFailure(PeerId.parse(hb.getPeerId()), hb);
        }
        leader.core.onHeartbeatTimeout(START + 200);
        assertEquals(List.of(N2.toString(), N3.toString()), to(heartbeats(leader)));
    }

    @Test
    void aReadRoundGoesToEveryFollowerWhateverItOwes() {
        CoreNode leader = CoreNode.create(N1, peers(3), 0, EMPTY, 0);
        CoreRouter net = new CoreRouter(List.of(leader, CoreNode.create(N2, peers(3), 0, EMPTY, 0), CoreNode.create(N3, peers(3), 0, EMPTY, 0)));
        leader.electByHand(START);
        net.settle(START);
        assertEquals(1, leader.core.commitIndex(), "the term's no-op is committed: a read needs only a round");
        net.cut.add(N3);
        leader.core.onHeartbeatTimeout(START + 100);
        net.settle(START + 100); // n3 does not answer this round
        int looked = leader.fx.sends().size();
        leader.core.onHeartbeatTimeout(START + 200);
        assertTrue(leader.fx.sends().subList(looked, leader.fx.sends().size()).stream().filter(RecordingEffects.Send::isAppend)
                .noneMatch(send -> send.to().equals(N3)), "n3 owes an answer: no timer round for it");

        looked = leader.fx.sends().size();
        leader.core.readIndex(List.of(RecordingEffects.read("read")), false, START + 250);
        List<AppendEntriesRequest> read = leader.fx.sends().subList(looked, leader.fx.sends().size()).stream()
                .filter(RecordingEffects.Send::isAppend).map(RecordingEffects.Send::append).toList();
        assertEquals(List.of(N2.toString(), N3.toString()), to(read), "a read round goes to every follower");
        assertTrue(read.stream().allMatch(AppendEntriesRequest::getReadRound));
    }
}
