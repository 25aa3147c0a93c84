package io.wheelraft.core.sim;

import io.wheelraft.core.ReadIndexClosure;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A read asked for on a follower is confirmed by the leader the way its caller chose, whatever the
 * leader's own {@code readOnlyOption}: the mode travels in the forwarded ReadIndex call.
 *
 * <p>The scene, in a 5-member group: the leader keeps one follower and loses the other three, so
 * it can no longer gather a quorum, while its lease (from the last round a quorum answered) still
 * holds. The follower it kept asks for a read right away. A READ_INDEX read needs a quorum round
 * and must not be served; a LEASE read is served from the lease without one. A call that names
 * no mode (an older member's) is confirmed as the leader's own option says.
 */
class ForwardedReadModeSimulationTest {

    private static final int T = 150;
    private static final int SEEDS = 20;

    /** The leader's options choose leases; the follower's caller asks for a quorum round. */
    @Test
    void quorumReadForwardedToALeaseLeaderWaitsForAQuorumItCannotGet() {
        for (long seed = 1; seed <= SEEDS; seed++) {
            Scene s = new Scene(seed, ReadOnlyOption.LEASE, false);
            s.readOnFollower(ReadOnlyOption.READ_INDEX);
            assertTrue(s.cluster.runUntil(() -> s.status[0] != null, 20L * T), "the read never ended; " + s.cluster.replayHint());
            assertFalse(s.status[0].isOk(), "a READ_INDEX read was confirmed by a leader that cannot reach a quorum "
                    + "(confirmed by its lease, its own option, instead of a round); " + s.cluster.replayHint());
        }
    }

    /** The leader's options choose quorum rounds; the follower's caller asks for the lease. */
    @Test
    void leaseReadForwardedToAQuorumLeaderIsServedFromTheLease() {
        for (long seed = 1; seed <= SEEDS; seed++) {
            Scene s = new Scene(seed, ReadOnlyOption.READ_INDEX, true);
            s.readOnFollower(ReadOnlyOption.LEASE);
            assertTrue(s.cluster.runUntil(() -> s.status[0] != null, 20L * T), "the read never ended; " + s.cluster.replayHint());
            assertNotNull(s.status[0]);
            assertTrue(s.status[0].isOk(), "a LEASE read was not served within the leader's lease (confirmed by a "
                    + "quorum round, the leader's own option, instead): " + s.status[0] + "; " + s.cluster.replayHint());
            assertTrue(s.readIndex[0] >= s.committedBeforeCut, "read index " + s.readIndex[0] + " is below the last write "
                    + s.committedBeforeCut + "; " + s.cluster.replayHint());
        }
    }

    /**
     * A ReadIndex call without a mode (from a member built before the field) is confirmed as the
     * leader's options say: here by the lease, without the quorum it cannot reach.
     */
    @Test
    void callWithoutAModeIsConfirmedAsTheLeadersOwnOptionSays() {
        for (long seed = 1; seed <= SEEDS; seed++) {
            Scene s = new Scene(seed, ReadOnlyOption.LEASE, false);
            ReadIndexRequest oldStyle = ReadIndexRequest.newBuilder().setGroupId(SimCluster.GROUP)
                    .setServerId(s.cluster.peer(s.follower).toString()).setPeerId(s.cluster.peer(s.leader).toString()).setCount(1).build();
            // The node is reached the way a transport reaches it, through the SPI it implements.
            CompletableFuture<ReadIndexResponse> answer = ((RaftRequestHandler) s.cluster.node(s.leader)).handleReadIndex(oldStyle);
            assertTrue(s.cluster.runUntil(answer::isDone, 20L * T), "the call was never answered; " + s.cluster.replayHint());
            assertTrue(answer.join().getSuccess(), "not served from the lease: " + answer.join() + "; " + s.cluster.replayHint());
        }
    }

    /** A 5-member group with one committed write, then cut: the leader and one follower apart from the rest. */
    private static final class Scene {
        final SimCluster cluster;
        final int leader;
        final int follower;
        final Status[] status = new Status[1];
        final long[] readIndex = {-1};
        long committedBeforeCut;

        /**
         * @param leaseAskedBefore a lease read was served before the cut, so the leader's heartbeats
         *                         since carry a lease (a leader not asked for one lately keeps none)
         */
        Scene(long seed, ReadOnlyOption leaderOption, boolean leaseAskedBefore) {
            cluster = new SimCluster(seed, 5, i -> new CounterFsm(i, new CommittedLog("seed " + seed)),
                    // A grace of 2T makes the lease min(T, grace / 2) - drift = 145 ms: long enough
                    // to outlast the cut and the forwarded call, far shorter than the step-down.
                    o -> o.electionTimeoutMs(T).connectionLostGraceMs(2 * T).readOnlyOption(leaderOption).leaseClockDriftMs(5));
            assertTrue(cluster.runUntil(() -> cluster.leaderIndex() >= 0, 20L * T), cluster.replayHint());
            leader = cluster.leaderIndex();
            follower = (leader + 1) % cluster.size();
            boolean[] written = new boolean[1];
            cluster.node(leader).apply(new Task(CounterFsm.delta(1), st -> written[0] = st.isOk()));
            assertTrue(cluster.runUntil(() -> written[0] && cluster.peer(leader).equals(cluster.node(follower).getLeaderId())
                    && ((CounterFsm) cluster.stateMachine(follower)).value() == 1, 20L * T), cluster.replayHint());
            committedBeforeCut = cluster.node(leader).status().commitIndex();
            if (leaseAskedBefore) {
                Status[] earlier = new Status[1];
                cluster.node(leader).readIndex(ReadOnlyOption.LEASE, (st, index) -> earlier[0] = st);
                assertTrue(cluster.runUntil(() -> earlier[0] != null && earlier[0].isOk(), 20L * T), cluster.replayHint());
                cluster.runFor(T / 5); // heartbeat-timer rounds that carry the lease are sent and answered
            }
            cluster.runFor(cluster.random().nextInt(T / 10)); // vary where in the heartbeat cycle the cut lands
            List<Integer> rest = new ArrayList<>();
            for (int i = 0; i < cluster.size(); i++) {
                if (i != leader && i != follower) {
                    rest.add(i);
                }
            }
            cluster.partition(List.of(leader, follower), rest);
        }

        void readOnFollower(ReadOnlyOption option) {
            assertTrue(cluster.node(leader).isLeader(), "the leader stepped down before the read; " + cluster.replayHint());
            ReadIndexClosure read = (st, index) -> {
                status[0] = st;
                readIndex[0] = index;
            };
            cluster.node(follower).readIndex(option, read);
        }
    }
}
