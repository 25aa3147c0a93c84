package io.wheelraft.client;

import io.grpc.ManagedChannel;
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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RaftClient} against two data members and a witness: the witness answers every call
 * OUTCOME_WITNESS, the client learns that at the first contact and then sends it nothing, for
 * commands, every read mode and follower reads, and never takes it for the leader.
 */
class RaftClientWitnessTest {

    private static final int WITNESS = 2;

    @TempDir
    Path dir;

    @Test
    void aWitnessIsAskedAtMostOnceThenSkippedForCommandsAndEveryRead() throws Exception {
        try (ClientTestCluster cluster = ClientTestCluster.withWitness(dir)) {
            int leader = awaitDataLeader(cluster);
            String witness = cluster.member(WITNESS).id.endpoint();
            RaftClientService witnessService = cluster.member(WITNESS).service;
            try (RaftClient client = cluster.client().build()) {
                // A hint learnt elsewhere names the witness: the first command goes there, is
                // refused as a witness's, and follows the witness's own leader hint.
                client.leaderIs(witness);
                assertEquals(1, Ledger.decode(client.submit(Ledger.command(1))));
                assertEquals(cluster.member(leader).id.endpoint(), client.leader());
                assertEquals(Set.of(witness), client.knownWitnesses());
                assertEquals(1, witnessService.refusedAsWitness());

                for (int i = 2; i <= 20; i++) {
                    assertEquals(i, Ledger.decode(client.submit(Ledger.command(1))));
                }
                for (ReadMode mode : ReadMode.values()) {
                    for (int i = 0; i < 10; i++) {
                        Reply r = client.query(new byte[0], mode, client.lastIndex(), Duration.ofSeconds(10));
                        assertEquals(20, Ledger.decode(r.result()));
                        assertNotEquals(witness, r.servedBy());
                    }
                }
                // A stale hint naming the witness again is not followed.
                client.leaderIs(witness);
                assertEquals(21, Ledger.decode(client.submit(Ledger.command(1))));
                assertEquals(1, witnessService.refusedAsWitness(), "the client sent the witness a call after learning what it is");
            }
            long before = witnessService.refusedAsWitness();
            try (RaftClient followers = cluster.client().followerReads(true).build()) {
                for (int i = 0; i < 30; i++) {
                    Reply r = followers.query(new byte[0], ReadMode.LINEARIZABLE, 0, Duration.ofSeconds(10));
                    assertEquals(21, Ledger.decode(r.result()));
                    assertNotEquals(witness, r.servedBy());
                }
                for (int i = 0; i < 30; i++) {
                    Reply r = followers.query(new byte[0], ReadMode.STALE, 0, Duration.ofSeconds(10));
                    assertNotEquals(witness, r.servedBy());
                }
                // Spread over all members, the witness is met at most once, then skipped.
                assertTrue(witnessService.refusedAsWitness() - before <= 1,
                        "follower reads reached the witness " + (witnessService.refusedAsWitness() - before) + " times");
            }
        }
    }

    @Test
    void concurrentCallsLearnTheWitnessOnceAndAllSucceed() throws Exception {
        try (ClientTestCluster cluster = ClientTestCluster.withWitness(dir);
             RaftClient client = cluster.client().followerReads(true).build()) {
            int leader = awaitDataLeader(cluster);
            List<CompletableFuture<byte[]>> calls = new java.util.ArrayList<>();
            for (int i = 1; i <= 50; i++) {
                calls.add(client.submitAsync(Ledger.command(i)));
                calls.add(client.queryAsync(new byte[0], ReadMode.STALE));
            }
            for (CompletableFuture<byte[]> f : calls) {
                f.get(20, TimeUnit.SECONDS);
            }
            assertEquals(50, Ledger.decode(client.query(new byte[0], ReadMode.LINEARIZABLE)));
            ClientTestCluster.await(() -> cluster.member(leader).ledger.total() == 50, 10_000, () -> "the leader did not apply 50 commands");
            assertEquals(1, cluster.member(leader).ledger.maxApplications());
            assertEquals(Set.of(cluster.member(WITNESS).id.endpoint()), client.knownWitnesses());
        }
    }

    @Test
    void askedWhoLeadsAWitnessSaysItIsOneAndEveryMemberListsTheWitnesses() throws Exception {
        try (ClientTestCluster cluster = ClientTestCluster.withWitness(dir)) {
            int leader = awaitDataLeader(cluster);
            String witness = cluster.member(WITNESS).id.endpoint();
            for (int i = 0; i < 3; i++) {
                ManagedChannel ch = RaftChannels.open(cluster.member(i).id.endpoint(), RpcOptions.defaults());
                try {
                    LeaderReply r = RaftClientServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
                            .leader(LeaderRequest.newBuilder().setGroupId(ClientTestCluster.GROUP).build());
                    assertEquals(i == WITNESS, r.getWitness(), "member " + i);
                    assertEquals(List.of(witness), r.getWitnessesList(), "member " + i);
                    assertEquals(cluster.member(leader).id.endpoint(), r.getLeader(), "member " + i);
                } finally {
                    ch.shutdownNow();
                }
            }
        }
    }

    /** The leader, which is a data member: a witness never leads. */
    private static int awaitDataLeader(ClientTestCluster cluster) {
        int leader = cluster.awaitLeader();
        assertNotEquals(WITNESS, leader, "a witness never leads");
        return leader;
    }
}
