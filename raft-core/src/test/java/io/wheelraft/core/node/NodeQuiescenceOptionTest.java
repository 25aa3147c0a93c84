package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.sim.SimFaults;
import io.wheelraft.core.sim.SimNetwork;
import io.wheelraft.core.sim.SimRuntime;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node may go quiet only on a transport that reports silent peers; it says so at construction otherwise. */
class NodeQuiescenceOptionTest {

    private static final PeerId N1 = new PeerId("n1", 1001);

    private final SimRuntime runtime = new SimRuntime(3);
    private final SimNetwork network = new SimNetwork(runtime, new Random(3), new SimFaults());

    private NodeOptions options() {
        return InMemoryNodeOptions.of(new Configuration(List.of(N1)), runtime)
                .quiesceAfterMs(500);
    }

    @Test
    void quiescenceOnATransportWithoutSilentPeerReportsIsRefusedWithWhatToDo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new NodeImpl("g", N1, options(), network.transport(N1.endpoint()), runtime));
        assertTrue(e.getMessage().contains("quiesceAfterMs is 500") && e.getMessage().contains("does not report silent peers")
                && e.getMessage().contains("set quiesceAfterMs to 0"), e.getMessage());
    }

    @Test
    void aNegativeQuiesceAfterMsIsRefusedByValidation() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> options().quiesceAfterMs(-1).validate());
        assertTrue(e.getMessage().contains("quiesceAfterMs must be >= 0"), e.getMessage());
    }

    @Test
    void theUnservedQuietDelayDefaultsToNoneAndNeverExceedsTheFullOne() {
        NodeOptions o = new NodeOptions().electionTimeoutMs(1000).quiesceAfterMs(1000);
        assertEquals(0, o.quiesceUnservedAfterMs(), "the first settled heartbeat asks");
        assertEquals(o.heartbeatIntervalMs(), o.quiesceUnservedAfterMs(-1).quiesceUnservedAfterMs(), "-1: one heartbeat interval");
        assertEquals(300, o.quiesceUnservedAfterMs(300).quiesceUnservedAfterMs());
        assertEquals(1000, o.quiesceUnservedAfterMs(5000).quiesceUnservedAfterMs(), "capped by quiesceAfterMs");
        assertEquals(0, o.quiesceAfterMs(0).quiesceUnservedAfterMs(), "never quiet stays never quiet");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> options().quiesceUnservedAfterMs(-2).validate());
        assertTrue(e.getMessage().contains("quiesceUnservedAfterMs must be >= 0, or -1"), e.getMessage());
    }

    @Test
    void withTheLivenessWatchTheNodeStartsAndASingleMemberGroupGoesQuiet() {
        network.watchLiveness(20, 100);
        NodeImpl node = new NodeImpl("g", N1, options(), network.transport(N1.endpoint()), runtime).start();
        assertFalse(node.isQuiet(), "not quiet before it has led and settled");
        boolean heldWhileLeading = false;
        for (int t = 0; t < 10_000 && !node.isQuiet(); t++) {
            runtime.step();
            heldWhileLeading |= node.isLeader() && !node.isQuiet() && node.holdsRecentEntries();
        }
        assertTrue(node.isLeader(), "the single member leads");
        assertTrue(node.isQuiet(), "a single-member leader with nothing to do goes quiet");
        assertTrue(heldWhileLeading, "the leader keeps its first entries in the recent-entries ring while awake");
        assertFalse(node.holdsRecentEntries(), "a quiet group lets go of its recent-entries ring");
    }
}
