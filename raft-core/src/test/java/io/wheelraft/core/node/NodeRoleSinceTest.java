package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.sim.SimFaults;
import io.wheelraft.core.sim.SimNetwork;
import io.wheelraft.core.sim.SimRuntime;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link NodeStatus#roleSince}: the wall-clock moment the node took its current role in its current term. */
class NodeRoleSinceTest {

    private static final PeerId N1 = new PeerId("n1", 1001);

    private final SimRuntime runtime = new SimRuntime(5);
    private final SimNetwork network = new SimNetwork(runtime, new Random(5), new SimFaults());

    private NodeOptions options() {
        return InMemoryNodeOptions.of(new Configuration(List.of(N1)), runtime).quiesceAfterMs(0);
    }

    @Test
    void winningLeadershipMovesRoleSinceToTheMomentOfTheWinAndItStaysWhileLeading() {
        NodeImpl node = new NodeImpl("g", N1, options(), network.transport(N1.endpoint()), runtime).start();
        NodeStatus asFollower = node.status();
        assertEquals(Role.FOLLOWER, asFollower.role());
        assertNotNull(asFollower.roleSince());
        Instant beforeWin = Instant.now();
        while (!beforeWin.isAfter(asFollower.roleSince())) {
            beforeWin = Instant.now(); // the win must be told apart from the start: the wall clock has to move first
        }
        for (int t = 0; t < 10_000 && !node.isLeader(); t++) {
            runtime.step();
        }
        assertTrue(node.isLeader(), "the single member leads");
        NodeStatus asLeader = node.status();
        assertFalse(asLeader.roleSince().isBefore(beforeWin), asLeader.roleSince() + " is before the steps that elected it " + beforeWin);
        for (int t = 0; t < 200; t++) {
            runtime.step(); // heartbeats and ticks while leading
        }
        assertEquals(asLeader.roleSince(), node.status().roleSince(), "leading on in the same term keeps the moment of the win");
    }

    /** A follower that moves to a newer term (it votes in it) holds its role in that term from then: the moment moves too. */
    @Test
    void aFollowerMovingToANewerTermMovesRoleSince() {
        PeerId n2 = new PeerId("n2", 1002);
        PeerId n3 = new PeerId("n3", 1003);
        NodeImpl node = new NodeImpl("g", N1, InMemoryNodeOptions.of(new Configuration(List.of(N1, n2, n3)), runtime)
                .quiesceAfterMs(0).fastFirstElection(false), network.transport(N1.endpoint()), runtime).start();
        long until = runtime.clock().millis() + 3_000; // past the election timeout (1000 ms): n1 would back a candidate
        while (runtime.clock().millis() < until) {
            runtime.step();
        }
        NodeStatus before = node.status();
        assertEquals(Role.FOLLOWER, before.role(), "n2 and n3 are down: n1 cannot win, and pre-votes bump no term");
        Instant beforeVote = Instant.now();
        while (!beforeVote.isAfter(before.roleSince())) {
            beforeVote = Instant.now(); // the move must be told apart from the earlier moment
        }
        var vote = node.handleRequestVote(io.wheelraft.proto.RequestVoteRequest.newBuilder().setGroupId("g").setServerId(n2.toString())
                .setPeerId(N1.toString()).setTerm(before.term() + 5).build());
        for (int t = 0; t < 100 && !vote.isDone(); t++) {
            runtime.step();
        }
        NodeStatus after = node.status();
        assertEquals(Role.FOLLOWER, after.role());
        assertEquals(before.term() + 5, after.term(), "the vote request's term");
        assertFalse(after.roleSince().isBefore(beforeVote), "a follower of term " + after.term() + " since " + after.roleSince()
                + ", before it left term " + before.term());
    }
}
