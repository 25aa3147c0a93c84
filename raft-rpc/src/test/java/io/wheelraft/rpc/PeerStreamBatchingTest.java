package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.wheelraft.rpc.Requests.answer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The peer stream carries the requests of many groups in one message: timer heartbeats wait for
 * company, and the next request that may not wait takes them along; the answers come back the
 * same way. The batch delay here is far longer than the test, so nothing leaves by the timer.
 */
class PeerStreamBatchingTest {

    private static final int GROUPS = 50;

    private GrpcRaftTransport leader;
    private GrpcRaftTransport follower;
    private PeerId leaderId;
    private PeerId followerId;
    private final List<FakeHandler> handlers = new ArrayList<>();

    @BeforeEach
    void start() {
        RpcOptions slowFlush = RpcOptions.builder().heartbeatBatchDelay(1000).livenessWatch(false).build();
        leader = GrpcRaftTransport.builder().options(slowFlush).start();
        follower = GrpcRaftTransport.builder().options(slowFlush).start();
        leaderId = Requests.peerAt(leader);
        followerId = Requests.peerAt(follower);
        for (int g = 0; g < GROUPS; g++) {
            FakeHandler h = new FakeHandler();
            handlers.add(h);
            follower.register("g" + g, followerId, h);
        }
    }

    @AfterEach
    void stop() {
        leader.close();
        follower.close();
    }

    @Test
    void heartbeatsOfManyGroupsAndTheVoteAfterThemTravelInOneMessageEachWay() throws Exception {
        // Open the stream first, so that the counts below are of this exchange only.
        answer(leader.requestVote(followerId, vote("g0"), 5000));
        long messagesBefore = leader.peerMessagesSent();
        long answersBefore = leader.peerAnswerMessagesReceived();

        List<CompletableFuture<AppendEntriesResponse>> heartbeats = new ArrayList<>();
        for (int g = 0; g < GROUPS; g++) {
            heartbeats.add(leader.appendEntries(followerId, heartbeat("g" + g, g), 5000));
        }
        assertEquals(messagesBefore, leader.peerMessagesSent(), "timer heartbeats wait for company");
        assertTrue(heartbeats.stream().noneMatch(CompletableFuture::isDone));

        RequestVoteResponse granted = answer(leader.requestVote(followerId, vote("g1"), 5000));

        assertTrue(granted.getGranted());
        for (int g = 0; g < GROUPS; g++) {
            AppendEntriesResponse r = answer(heartbeats.get(g));
            assertEquals(g, r.getSequence(), "each heartbeat gets its own group's answer");
            assertEquals(1, handlers.get(g).appends.size());
        }
        assertEquals(messagesBefore + 1, leader.peerMessagesSent(), "the vote took every queued heartbeat along");
        assertEquals(answersBefore + 1, leader.peerAnswerMessagesReceived(),
                "the vote's answer took the heartbeats' answers along");
    }

    @Test
    void appendsWithEntriesAndReadRoundsLeaveAtOnceInSendOrder() throws Exception {
        long before = leader.peerMessagesSent();
        AppendEntriesResponse first = answer(leader.appendEntries(followerId, Requests.append(leaderId, followerId, 1, 1, 8)
                .toBuilder().setGroupId("g0").build(), 5000));
        AppendEntriesResponse readRound = answer(leader.appendEntries(followerId,
                heartbeat("g0", 2).toBuilder().setReadRound(true).build(), 5000));

        assertTrue(first.getSuccess());
        assertEquals(2, readRound.getSequence());
        assertEquals(before + 2, leader.peerMessagesSent());
        assertEquals(List.of(1L, 2L), handlers.get(0).appends.stream().map(AppendEntriesRequest::getSequence).toList());
    }

    private AppendEntriesRequest heartbeat(String group, long round) {
        return AppendEntriesRequest.newBuilder().setGroupId(group).setServerId(leaderId.toString()).setPeerId(followerId.toString())
                .setTerm(7).setSequence(round).setHeartbeat(true).build();
    }

    private RequestVoteRequest vote(String group) {
        return RequestVoteRequest.newBuilder().setGroupId(group).setServerId(leaderId.toString()).setPeerId(followerId.toString())
                .setTerm(8).build();
    }
}
