package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import static io.wheelraft.rpc.Requests.GROUP;
import static io.wheelraft.rpc.Requests.answer;
import static io.wheelraft.rpc.Requests.append;
import static io.wheelraft.rpc.Requests.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GrpcRaftTransportTest {

    private GrpcRaftTransport leader;
    private GrpcRaftTransport follower;
    private PeerId leaderId;
    private PeerId followerId;
    private FakeHandler handler;

    @BeforeEach
    void start() {
        leader = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        follower = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        leaderId = Requests.peerAt(leader);
        followerId = Requests.peerAt(follower);
        handler = new FakeHandler();
        follower.register(GROUP, followerId, handler);
    }

    @AfterEach
    void stop() {
        leader.close();
        follower.close();
    }

    @Test
    void aHandlerOnAnIoThreadGetsItsEventLoopAndATaskPostedThereRunsOnTheSameThread() throws Exception {
        CompletableFuture<Thread> handlerThread = new CompletableFuture<>();
        CompletableFuture<Thread> postedTaskThread = new CompletableFuture<>();
        follower.unregister(GROUP, followerId);
        follower.register(GROUP, followerId, new FakeHandler() {
            @Override
            public CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request) {
                handlerThread.complete(Thread.currentThread());
                Executor loop = follower.laterOnCallingThread();
                if (loop == null) {
                    postedTaskThread.completeExceptionally(new AssertionError("no event loop on " + Thread.currentThread()));
                } else {
                    loop.execute(() -> postedTaskThread.complete(Thread.currentThread()));
                }
                return super.handleTimeoutNow(request);
            }
        });
        assertTrue(answer(leader.timeoutNow(followerId, TimeoutNowRequest.newBuilder().setGroupId(GROUP)
                .setServerId(leaderId.toString()).setPeerId(followerId.toString()).build(), 5000)).getSuccess());
        assertEquals(handlerThread.get(5, TimeUnit.SECONDS), postedTaskThread.get(5, TimeUnit.SECONDS));
        assertNull(follower.laterOnCallingThread(), "the test's own thread runs no event loop");
    }

    @Test
    void requestWithoutGroupIdIsRejectedNamingTheField() throws Exception {
        AppendEntriesRequest request = append(leaderId, followerId, 1, 1, 16).toBuilder().clearGroupId().build();
        TransportException e = failure(leader.appendEntries(followerId, request, 5000));
        assertEquals(Kind.REJECTED, e.kind());
        assertTrue(e.getMessage().contains("INVALID_ARGUMENT") && e.getMessage().contains("group_id"), e.getMessage());
    }

    @Test
    void senderIdThatIsNotAPeerIdIsRejected() throws Exception {
        AppendEntriesRequest request = append(leaderId, followerId, 1, 1, 16).toBuilder().setServerId("nonsense").build();
        TransportException e = failure(leader.appendEntries(followerId, request, 5000));
        assertEquals(Kind.REJECTED, e.kind());
        assertTrue(e.getMessage().contains("server_id"), e.getMessage());
    }

    /** Replaces the follower's handler with one that takes every AppendEntries and never answers. */
    private void followerNeverAnswersAppends() {
        follower.unregister(GROUP, followerId);
        follower.register(GROUP, followerId, new FakeHandler() {
            @Override
            public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
                return new CompletableFuture<>();
            }
        });
    }

    /**
     * The pipe keeps one sweep for all deadlines, scheduled for the earliest: a call with a short
     * deadline sent after one with a long deadline must still expire at its own, and a call sent
     * after everything expired must get a new sweep.
     */
    @Test
    void eachCallOnThePipeExpiresAtItsOwnDeadline() throws Exception {
        followerNeverAnswersAppends();
        CompletableFuture<AppendEntriesResponse> slow = leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 60_000);
        CompletableFuture<AppendEntriesResponse> quick = leader.appendEntries(followerId, append(leaderId, followerId, 2, 1, 16), 200);
        assertEquals(Kind.TIMEOUT, failure(quick).kind());
        assertFalse(slow.isDone(), "the 60 s call expired with the 200 ms one");
        CompletableFuture<AppendEntriesResponse> later = leader.appendEntries(followerId, append(leaderId, followerId, 3, 1, 16), 200);
        assertEquals(Kind.TIMEOUT, failure(later).kind());
        assertFalse(slow.isDone());
    }

    @Test
    void nonPositiveTimeoutIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 0));
        assertTrue(e.getMessage().contains("timeoutMs") && e.getMessage().contains("0"), e.getMessage());
    }

    @Test
    void registeringTwoNodesForTheSameGroupAndPeerFails() {
        RaftRequestHandler other = new FakeHandler();
        assertThrows(IllegalStateException.class, () -> follower.register(GROUP, followerId, other));
    }

    @Test
    void pipelinedAppendEntriesReachTheHandlerInSendOrder() throws Exception {
        int n = 2000;
        answer(leader.appendEntries(followerId, append(leaderId, followerId, 0, 1, 1), 5000));
        handler.appends.clear();
        List<CompletableFuture<AppendEntriesResponse>> calls = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            calls.add(leader.appendEntries(followerId, append(leaderId, followerId, i, 2, 64), 10_000));
        }
        for (int i = 0; i < n; i++) {
            assertEquals(i + 1, answer(calls.get(i)).getSequence());
        }
        assertEquals(n, handler.appends.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i + 1, handler.appends.get(i).getSequence(), "request " + (i + 1) + " arrived out of order");
        }
    }

}
