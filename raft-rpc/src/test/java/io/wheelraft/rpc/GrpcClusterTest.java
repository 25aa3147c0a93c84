package io.wheelraft.rpc;

import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.rpc.GrpcTestCluster.Increment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three real nodes in one JVM over gRPC on loopback, each on RocksDB, file meta and local snapshot
 * storage in its own directory, started through {@code RaftGroupService}: election, replication
 * to every state machine, a follower restarted from its data on the same port catching up, fast
 * failover when the leader's transport dies, and linearizable reads on leader and followers.
 */
class GrpcClusterTest {

    private static final Logger LOG = LoggerFactory.getLogger(GrpcClusterTest.class);
    private static final int ELECTION_TIMEOUT_MS = 1000;
    /** Generous bound for anything that takes a few round trips or one election. */
    private static final long WAIT_MS = 10L * ELECTION_TIMEOUT_MS;

    @TempDir
    Path dir;

    private GrpcTestCluster cluster;

    @AfterEach
    void stopCluster() throws InterruptedException {
        if (cluster != null) {
            cluster.close();
        }
    }

    private GrpcTestCluster startCluster() {
        cluster = new GrpcTestCluster(dir, 3, ELECTION_TIMEOUT_MS);
        return cluster;
    }

    @Test
    void electsALeaderAndAppliesTwoHundredIncrementsOnEveryStateMachine() throws Exception {
        GrpcTestCluster c = startCluster();
        int leader = c.awaitLeader(WAIT_MS);
        for (int i = 0; i < c.size(); i++) {
            if (i != leader) {
                assertEquals(Role.FOLLOWER, c.node(i).status().role(), "member " + i + c.describe());
            }
        }

        List<Long> results = incrementAll(c, leader, 200);

        assertEquals(200, new HashSet<>(results).size(), "every increment must see its own value: " + results);
        awaitEveryValue(c, 200);
    }

    @Test
    void restartedFollowerCatchesUpFromItsDataOnTheSamePort() throws Exception {
        GrpcTestCluster c = startCluster();
        int leader = c.awaitLeader(WAIT_MS);
        incrementAll(c, leader, 50);
        int follower = (leader + 1) % c.size();
        awaitEveryValue(c, 50);
        int port = c.member(follower).port;
        long lastIndexBefore = c.node(follower).status().lastLogIndex();

        c.stop(follower);
        incrementAll(c, leader, 50); // the leader and the other follower are a quorum
        c.restart(follower);

        assertEquals(port, c.member(follower).transport.port(), "restart must come back on the member's port");
        NodeStatus recovered = c.node(follower).status();
        assertTrue(recovered.lastLogIndex() >= lastIndexBefore,
                "restarted follower reopened its log at " + recovered.lastLogIndex() + ", had " + lastIndexBefore);
        awaitEveryValue(c, 100);
        long leaderApplied = c.counter(leader).appliedIndex();
        GrpcTestCluster.await(() -> c.counter(follower).appliedIndex() >= leaderApplied, WAIT_MS,
                () -> "restarted follower did not apply through " + leaderApplied + c.describe());
        assertEquals(c.member(leader).id, c.node(follower).getLeaderId(), "restarted follower follows the leader" + c.describe());
    }

    @Test
    void followerBehindTheCompactedLogCatchesUpByInstallSnapshot() throws Exception {
        GrpcTestCluster c = startCluster();
        int leader = c.awaitLeader(WAIT_MS);
        incrementAll(c, leader, 20);
        awaitEveryValue(c, 20);
        int follower = (leader + 1) % c.size();
        c.stop(follower);
        incrementAll(c, leader, 80);

        java.util.concurrent.CompletableFuture<io.wheelraft.core.Status> saved = new java.util.concurrent.CompletableFuture<>();
        c.node(leader).snapshot(saved::complete);
        io.wheelraft.core.Status status = saved.get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertTrue(status.isOk(), "snapshot failed: " + status);
        GrpcTestCluster.await(() -> c.node(leader).status().firstLogIndex() > 30, WAIT_MS,
                () -> "the leader did not compact its log past the stopped follower" + c.describe());

        c.restart(follower);
        awaitEveryValue(c, 100);
        GrpcTestCluster.await(() -> c.counter(follower).snapshotsLoaded() >= 1, WAIT_MS,
                () -> "the follower caught up without a snapshot" + c.describe());
        assertEquals(101, c.increment(leader, 1).result.get(WAIT_MS, TimeUnit.MILLISECONDS));
        awaitEveryValue(c, 101);
    }

    @Test
    void killingTheLeadersTransportElectsANewLeader() throws Exception {
        GrpcTestCluster c = startCluster();
        int old = c.awaitLeader(WAIT_MS);
        incrementAll(c, old, 20);
        awaitEveryValue(c, 20);
        long oldTerm = c.node(old).status().term();

        long killedAt = System.nanoTime();
        c.killTransport(old);
        int[] next = {-1};
        GrpcTestCluster.await(() -> {
            for (int i = 0; i < c.size(); i++) {
                if (i != old && c.node(i).isLeader() && c.node(i).status().term() > oldTerm) {
                    next[0] = i;
                    return true;
                }
            }
            return false;
        }, WAIT_MS, () -> "no new leader after the leader's transport died" + c.describe());
        long failoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        // Informational only: the connection-break signal should make this well under the election
        // timeout, but a timed assertion would be flaky on a loaded machine.
        LOG.info("new leader {} {} ms after the old leader's transport was killed (election timeout {} ms)",
                c.member(next[0]).id, failoverMs, ELECTION_TIMEOUT_MS);

        int leader = next[0];
        assertNotEquals(old, leader);
        assertEquals(21, c.increment(leader, 1).result.get(WAIT_MS, TimeUnit.MILLISECONDS), "new leader lost committed increments");
        for (int i = 0; i < c.size(); i++) {
            if (i != old) {
                int member = i;
                GrpcTestCluster.await(() -> c.counter(member).value() == 21, WAIT_MS,
                        () -> "survivor " + member + " did not apply the new leader's write" + c.describe());
            }
        }
    }

    @Test
    void readIndexIsLinearizableOnTheLeaderAndOnFollowers() throws Exception {
        GrpcTestCluster c = startCluster();
        int leader = c.awaitLeader(WAIT_MS);
        long expected = 0;
        for (int round = 0; round < 30; round++) {
            long value = c.increment(leader, 1).result.get(WAIT_MS, TimeUnit.MILLISECONDS);
            expected++;
            assertEquals(expected, value);
            // The write was acknowledged before the read began, so any member's linearizable read must
            // see it, however far that member's own state machine lags behind.
            int reader = round % c.size();
            long seen = readIndex(c, reader);
            assertTrue(seen >= expected, "round " + round + ": member " + reader + " (" + (reader == leader ? "leader" : "follower")
                    + ") read " + seen + " after increment " + expected + " was acknowledged" + c.describe());
        }
        for (int i = 0; i < c.size(); i++) {
            assertEquals(expected, readIndex(c, i), "final read on member " + i + c.describe());
        }
    }

    /** A linearizable read of member {@code i}'s counter (value read inside the closure, on the apply lane). */
    private static long readIndex(GrpcTestCluster c, int i) throws Exception {
        CompletableFuture<Long> read = new CompletableFuture<>();
        GrpcTestCluster.Counter counter = c.counter(i);
        c.node(i).readIndex((Status status, long index) -> {
            if (status.isOk()) {
                read.complete(counter.value());
            } else {
                read.completeExceptionally(new IllegalStateException("readIndex on member " + i + " failed: " + status));
            }
        });
        return read.get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** Proposes {@code n} increments of 1 at once to {@code leader} and waits for every one to be acknowledged. */
    private static List<Long> incrementAll(GrpcTestCluster c, int leader, int n) throws Exception {
        List<Increment> increments = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            increments.add(c.increment(leader, 1));
        }
        List<Long> results = new ArrayList<>();
        for (Increment inc : increments) {
            results.add(inc.result.get(WAIT_MS, TimeUnit.MILLISECONDS));
        }
        return results;
    }

    private static void awaitEveryValue(GrpcTestCluster c, long value) {
        Set<Integer> running = new HashSet<>();
        for (int i = 0; i < c.size(); i++) {
            if (c.node(i) != null) {
                running.add(i);
            }
        }
        GrpcTestCluster.await(() -> running.stream().allMatch(i -> c.counter(i).value() == value), WAIT_MS,
                () -> "not every state machine reached " + value + c.describe());
    }
}
