package io.wheelraft.client;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientCalls;
import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.ClientReply;
import io.wheelraft.client.proto.Command;
import io.wheelraft.client.proto.Outcome;
import io.wheelraft.client.proto.RaftClientServiceGrpc;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RaftClient} and {@link RaftClientService} against a real three-node gRPC group. */
class RaftClientClusterTest {

    @TempDir
    Path dir;

    @Test
    void followsRedirectsAndServesEveryReadMode() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            int follower = (leader + 1) % 3;
            // Start the client at a follower: its first command must be redirected.
            try (RaftClient client = cluster.client().build()) {
                client.leaderIs(cluster.member(follower).id.endpoint());
                assertEquals(1, Ledger.decode(client.submit(Ledger.command(1))));
                assertEquals(cluster.member(leader).id.endpoint(), client.leader());
                assertEquals(2, Ledger.decode(client.submit(Ledger.command(2))));
                assertEquals(2, Ledger.decode(client.query(new byte[0], ReadMode.LINEARIZABLE)));
                assertEquals(2, Ledger.decode(client.query(new byte[0], ReadMode.LEASE)));
                // A stale read waits for an index this client has seen, so it reads its own writes.
                for (int i = 0; i < 10; i++) {
                    assertEquals(2, Ledger.decode(client.query(new byte[0], ReadMode.STALE)));
                }
            }
            try (RaftClient followers = cluster.client().followerReads(true).build()) {
                for (int i = 0; i < 6; i++) {
                    assertEquals(2, Ledger.decode(followers.query(new byte[0], ReadMode.LINEARIZABLE)));
                }
            }
        }
    }

    @Test
    void leaderKillDuringAStreamOfWritesLosesAndDoublesNothing() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir);
             RaftClient client = cluster.client().timeout(Duration.ofSeconds(15)).build()) {
            int leader = cluster.awaitLeader();
            AtomicLong ids = new AtomicLong();
            AtomicBoolean run = new AtomicBoolean(true);
            List<Long> acked = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Throwable> problems = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 8; w++) {
                Thread t = new Thread(() -> {
                    // Each writer keeps 16 calls outstanding through the async API.
                    LinkedBlockingQueue<CompletableFuture<Long>> window = new LinkedBlockingQueue<>();
                    while (run.get() || !window.isEmpty()) {
                        if (run.get() && window.size() < 16) {
                            long id = ids.incrementAndGet();
                            window.add(client.submitAsync(Ledger.command(id)).thenApply(r -> id));
                            continue;
                        }
                        try {
                            acked.add(window.take().join());
                        } catch (CompletionException e) {
                            problems.add(e.getCause());
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
                writers.add(t);
                t.start();
            }
            ClientTestCluster.await(() -> acked.size() > 300, 10_000, () -> "writes did not get going");
            cluster.stop(leader);
            long ackedAtKill = acked.size();
            ClientTestCluster.await(() -> acked.size() > ackedAtKill + 300, 15_000, () -> "writes did not resume after the kill");
            run.set(false);
            for (Thread t : writers) {
                t.join(20_000);
            }
            assertEquals(List.of(), problems, "every write succeeds through the leader change");
            cluster.restart(leader);
            cluster.awaitLeader();
            cluster.awaitConverged();
            for (int i = 0; i < 3; i++) {
                Ledger ledger = cluster.member(i).ledger;
                assertEquals(ids.get(), ledger.total(), "member " + i + " applied every write once");
                assertEquals(1, ledger.maxApplications(), "member " + i + " applied no write twice");
                for (long id : acked) {
                    assertEquals(1, ledger.applications(id), "acknowledged write " + id + " on member " + i);
                }
            }
        }
    }

    @Test
    void aRetriedCommandIsAppliedOnceAcrossASnapshotAndARestart() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            ClientReply first = send(cluster, leader, "retrying-client", 1, 77);
            assertEquals(Outcome.OUTCOME_OK, first.getOutcome());
            assertEquals(Outcome.OUTCOME_OK, send(cluster, leader, "retrying-client", 1, 77).getOutcome());
            cluster.awaitConverged();
            for (int i = 0; i < 3; i++) {
                CompletableFuture<io.wheelraft.core.Status> done = new CompletableFuture<>();
                cluster.member(i).node.snapshot(done::complete);
                assertTrue(done.get(10, TimeUnit.SECONDS).isOk(), "snapshot of member " + i);
            }
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
            }
            for (int i = 0; i < 3; i++) {
                cluster.restart(i);
            }
            leader = cluster.awaitLeader();
            cluster.awaitConverged();
            ClientReply retry = send(cluster, leader, "retrying-client", 1, 77);
            assertEquals(Outcome.OUTCOME_OK, retry.getOutcome(), retry.getMessage());
            assertEquals(first.getResult(), retry.getResult(), "the retry gets the first answer");
            assertEquals(first.getIndex(), retry.getIndex());
            cluster.awaitConverged();
            for (int i = 0; i < 3; i++) {
                assertEquals(1, cluster.member(i).ledger.applications(77), "member " + i);
                assertEquals(1, cluster.member(i).ledger.total());
                assertTrue(cluster.member(i).stateMachine.remembers("retrying-client"));
            }
        }
    }

    @Test
    void idleSessionsExpireOnEveryMemberThroughTheLog() throws Exception {
        ExactlyOnceStateMachine.Options shortExpiry = new ExactlyOnceStateMachine.Options(200, 1000, 1000);
        try (ClientTestCluster cluster = new ClientTestCluster(dir, 3, shortExpiry, o -> { })) {
            cluster.awaitLeader();
            try (RaftClient idle = cluster.client().build(); RaftClient busy = cluster.client().build()) {
                idle.submit(Ledger.command(1));
                cluster.awaitConverged();
                for (int i = 0; i < 3; i++) {
                    assertTrue(cluster.member(i).stateMachine.remembers(idle.clientId()));
                }
                long[] id = {100};
                ClientTestCluster.await(() -> {
                    busy.submit(Ledger.command(id[0]++));
                    return !cluster.member(0).stateMachine.remembers(idle.clientId());
                }, 10_000, () -> "the idle session never expired");
                cluster.awaitConverged();
                for (int i = 0; i < 3; i++) {
                    assertTrue(!cluster.member(i).stateMachine.remembers(idle.clientId()), "member " + i);
                    assertTrue(cluster.member(i).stateMachine.remembers(busy.clientId()), "member " + i);
                    assertTrue(cluster.member(i).stateMachine.expiredSessions() >= 1);
                }
            }
        }
    }

    @Test
    void anOverloadedLeaderRefusesBusyAndTheClientRetriesEveryCallOnce() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir, 3, ExactlyOnceStateMachine.Options.defaults(),
                o -> o.applyQueueCapacity(4))) {
            int leader = cluster.awaitLeader();
            try (RaftClient client = cluster.client().build()) {
                List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < 400; i++) {
                    calls.add(client.submitAsync(Ledger.command(i)));
                }
                for (CompletableFuture<byte[]> c : calls) {
                    c.get(30, TimeUnit.SECONDS);
                }
            }
            assertTrue(cluster.member(leader).service.refusedBusy() > 0, "the leader's queue of 4 overflowed");
            cluster.awaitConverged();
            assertEquals(400, cluster.member(leader).ledger.total());
            assertEquals(1, cluster.member(leader).ledger.maxApplications());
        }
    }

    @Test
    void withoutAQuorumACommandFailsAtItsDeadlineAsCertainlyNotApplied() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            cluster.stop((leader + 1) % 3);
            cluster.stop((leader + 2) % 3);
            ClientTestCluster.await(() -> !cluster.member(leader).node.isLeader(), 10_000, () -> "the leader did not step down");
            try (RaftClient client = cluster.client().timeout(Duration.ofMillis(700)).build()) {
                long start = System.nanoTime();
                NotAppliedException e = assertThrows(NotAppliedException.class, () -> client.submit(Ledger.command(1)));
                assertTrue(e.getMessage().contains("deadline"), e.getMessage());
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "ended near its deadline, not later");
                assertThrows(NotAppliedException.class, () -> client.query(new byte[0], ReadMode.LINEARIZABLE));
            }
            // Too many calls outstanding: the next one is refused as overload, unsent.
            try (RaftClient tiny = cluster.client().maxOutstanding(1).timeout(Duration.ofMillis(300)).build()) {
                CompletableFuture<Reply> first = tiny.submitAsync(Ledger.command(2), Duration.ofSeconds(5));
                CompletionException e = assertThrows(CompletionException.class, () -> tiny.submitAsync(Ledger.command(3)).join());
                assertInstanceOf(OverloadedException.class, e.getCause());
                first.cancel(true);
            }
            assertEquals(0, cluster.member(leader).ledger.total());
        }
    }

    /**
     * A write sent while no member knows a leader (a quorum is down) waits, the client asking the
     * members who leads, and goes to the leader as soon as one is elected: applied once, and the
     * client knows the new leader.
     */
    @Test
    void aWriteWithoutALeaderWaitsForTheElectionAndGoesToTheNewLeader() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            cluster.stop((leader + 1) % 3);
            cluster.stop((leader + 2) % 3);
            ClientTestCluster.await(() -> !cluster.member(leader).node.isLeader(), 10_000, () -> "the leader did not step down");
            try (RaftClient client = cluster.client().timeout(Duration.ofSeconds(30)).build()) {
                CompletableFuture<Reply> write = client.submitAsync(Ledger.command(5), Duration.ofSeconds(30));
                ClientTestCluster.await(() -> client.leader() == null, 5_000, () -> "the client still names a leader");
                assertFalse(write.isDone(), "the write ended although a leader may still be elected: " + write);
                cluster.restart((leader + 1) % 3);
                Reply r = write.get(30, TimeUnit.SECONDS);
                int newLeader = cluster.awaitLeader();
                assertEquals(cluster.member(newLeader).id.endpoint(), r.servedBy(), "answered by the elected leader");
                assertEquals(r.servedBy(), client.leader());
                ClientTestCluster.await(() -> cluster.member(newLeader).ledger.applications(5) == 1, 10_000, () -> "not applied once");
            }
        }
    }

    @Test
    void aReadRightAfterAFullRestartWaitsForTheNewLeader() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            cluster.awaitLeader();
            try (RaftClient client = cluster.client().build()) {
                client.submit(Ledger.command(1));
            }
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
            }
            for (int i = 0; i < 3; i++) {
                cluster.restart(i);
            }
            try (RaftClient client = cluster.client().build()) {
                assertEquals(1, Ledger.decode(client.query(new byte[0], ReadMode.LINEARIZABLE)));
            }
        }
    }

    @Test
    void aSilentLeaderIsLeftForTheLeaderTheOthersName() throws Exception {
        // A server that accepts the stream but never answers: a leader cut off without a reset.
        io.grpc.Server silent = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
                .addService(new RaftClientServiceGrpc.RaftClientServiceImplBase() {
                    @Override
                    public StreamObserver<ClientCalls> calls(StreamObserver<ClientReplies> out) {
                        return new StreamObserver<>() {
                            public void onNext(ClientCalls value) { }
                            public void onError(Throwable t) { }
                            public void onCompleted() { }
                        };
                    }
                }).build().start();
        try (ClientTestCluster cluster = new ClientTestCluster(dir)) {
            int leader = cluster.awaitLeader();
            String silentEndpoint = "127.0.0.1:" + silent.getPort();
            List<String> endpoints = new ArrayList<>(cluster.endpoints());
            endpoints.add(silentEndpoint);
            try (RaftClient client = RaftClient.builder().endpoints(endpoints).groupId(ClientTestCluster.GROUP)
                    .silenceBeforeProbe(Duration.ofMillis(100)).timeout(Duration.ofSeconds(5)).build()) {
                client.leaderIs(silentEndpoint);
                assertNotNull(client.submit(Ledger.command(9)));
                assertEquals(cluster.member(leader).id.endpoint(), client.leader());
            }
        } finally {
            silent.shutdownNow();
        }
    }

    /** Sends one command straight on the service's stream, as a client retrying it would. */
    private static ClientReply send(ClientTestCluster cluster, int member, String clientId, long sequence, long id) throws Exception {
        ManagedChannel channel = RaftChannels.open(cluster.member(member).id.endpoint(), RpcOptions.defaults());
        try {
            CompletableFuture<ClientReply> reply = new CompletableFuture<>();
            StreamObserver<ClientCalls> out = RaftClientServiceGrpc.newStub(channel).calls(new StreamObserver<>() {
                public void onNext(ClientReplies r) { reply.complete(r.getReplies(0)); }
                public void onError(Throwable t) { reply.completeExceptionally(t); }
                public void onCompleted() { }
            });
            out.onNext(ClientCalls.newBuilder().addCalls(ClientCall.newBuilder().setCallId(1).setGroupId(ClientTestCluster.GROUP)
                    .setCommand(Command.newBuilder().setClientId(clientId).setSequence(sequence).setFirstUnacked(sequence)
                            .setPayload(ByteString.copyFrom(Ledger.command(id))))).build());
            ClientReply r = reply.get(10, TimeUnit.SECONDS);
            out.onCompleted();
            return r;
        } finally {
            channel.shutdownNow();
        }
    }
}
