package io.wheelraft.client;

import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.LeaderReply;
import io.wheelraft.client.proto.LeaderRequest;
import io.wheelraft.client.proto.RaftClientServiceGrpc;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code Leader} questions held by the member until it knows a leader the asker can use
 * ({@link HeldLeaderAnswer}, {@link LeaderQuestions}), against a real three-node gRPC group.
 */
class HeldLeaderQuestionTest {

    @TempDir
    Path dir;

    @Test
    void aHeldQuestionIsAnsweredWithTheNextLeaderOnceTheMemberKnowsIt() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            int follower = (leader + 1) % 3;
            String old = cluster.member(leader).id.endpoint();
            long oldTerm = cluster.member(follower).node.status().term();
            ManagedChannel channel = RaftChannels.open(cluster.member(follower).id.endpoint(), RpcOptions.defaults());
            try {
                assertEquals(old, ask(channel, 0, List.of()).get(10, TimeUnit.SECONDS).getLeader(), "without a wait: what it knows, at once");

                CompletableFuture<LeaderReply> held = ask(channel, 5_000, List.of(old));
                cluster.stop(leader);
                LeaderReply reply = held.get(10, TimeUnit.SECONDS);
                assertNotEquals(old, reply.getLeader(), "answered before it knew another leader");
                assertFalse(reply.getLeader().isEmpty(), "answered before the election ended");
                assertTrue(reply.getTerm() > oldTerm);
                assertEquals(cluster.member(cluster.awaitLeader()).id.endpoint(), reply.getLeader());
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /** Nothing changes while it waits: the member answers with what it knows when the wait ends, within the caller's deadline. */
    @Test
    void aHeldQuestionEndsWithWhatTheMemberKnowsWhenItsWaitEnds() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            String current = cluster.member(leader).id.endpoint();
            ManagedChannel channel = RaftChannels.open(cluster.member((leader + 1) % 3).id.endpoint(), RpcOptions.defaults());
            try {
                long start = System.nanoTime();
                LeaderReply reply = ask(channel, 300, List.of(current)).get(10, TimeUnit.SECONDS);
                assertEquals(current, reply.getLeader());
                assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "answered before its wait ended");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /**
     * While a write waits for an election that cannot finish (two of three down), the client has
     * one question out per member, each held for {@link LeaderQuestions#WAIT_MS}: not one every
     * tick (it asked every 15 ms before). Then the write goes to the new leader once there is one.
     */
    @Test
    void aClientWaitingForALeaderAsksEachMemberOncePerWait() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            cluster.stop((leader + 1) % 3);
            cluster.stop((leader + 2) % 3);
            ClientTestCluster.Member survivor = cluster.member(leader);
            ClientTestCluster.await(() -> !survivor.node.isLeader(), 10_000, () -> "the leader did not step down");
            try (RaftClient client = cluster.client().timeout(Duration.ofSeconds(30)).build()) {
                CompletableFuture<Reply> write = client.submitAsync(Ledger.command(5), Duration.ofSeconds(30));
                ClientTestCluster.await(() -> client.leader() == null && survivor.service.leaderCalls() > 0, 5_000,
                        () -> "the client never asked the survivor who leads");
                long asked = survivor.service.leaderCalls();
                long since = System.nanoTime();
                ClientTestCluster.await(() -> survivor.service.leaderCalls() >= asked + 2, 10_000,
                        () -> "the client stopped asking while its write waited");
                long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
                assertTrue(tookMs >= LeaderQuestions.WAIT_MS / 2, "two more questions within " + tookMs
                        + " ms: the survivor is asked every tick instead of holding each question");
                assertFalse(write.isDone(), "the write ended although a leader may still be elected: " + write);

                cluster.restart((leader + 1) % 3);
                Reply r = write.get(30, TimeUnit.SECONDS);
                assertEquals(cluster.member(cluster.awaitLeader()).id.endpoint(), r.servedBy());
            }
        }
    }

    private static CompletableFuture<LeaderReply> ask(ManagedChannel channel, int waitMs, List<String> notLeaders) {
        CompletableFuture<LeaderReply> reply = new CompletableFuture<>();
        RaftClientServiceGrpc.newStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .leader(LeaderRequest.newBuilder().setGroupId(ClientTestCluster.GROUP).setWaitMs(waitMs).addAllNotLeaders(notLeaders).build(),
                        new StreamObserver<>() {
                            public void onNext(LeaderReply r) { reply.complete(r); }
                            public void onError(Throwable t) { reply.completeExceptionally(t); }
                            public void onCompleted() { }
                        });
        return reply;
    }
}
