package io.wheelraft.core.sim;

import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Shutting a leader down ends every caller it still holds: a read waiting for a quorum round it
 * cannot get and a leader transfer whose target never takes over each get a failed status at
 * once, rather than never (the round and the transfer's deadline die with the node).
 */
class ShutdownCompletesCallersSimulationTest {

    private static final int T = 150;
    private static final int SEEDS = 10;

    @Test
    void shutdownEndsAPendingReadAndATransfer() {
        for (long s = 1; s <= SEEDS; s++) {
            long seed = s;
            SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, new CommittedLog("seed " + seed)),
                    o -> o.electionTimeoutMs(T).readOnlyOption(ReadOnlyOption.READ_INDEX));
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), c.replayHint());
            int leader = c.leaderIndex();
            boolean[] written = new boolean[1];
            c.node(leader).apply(new Task(CounterFsm.delta(1), st -> written[0] = st.isOk()));
            assertTrue(c.runUntil(() -> written[0], 20L * T), c.replayHint());
            List<Integer> rest = new ArrayList<>();
            for (int i = 0; i < c.size(); i++) {
                if (i != leader) {
                    rest.add(i);
                }
            }
            c.partition(List.of(leader), rest); // no round is answered and no TimeoutNow arrives

            Status[] read = new Status[1];
            Status[] transfer = new Status[1];
            c.node(leader).readIndex((st, index) -> read[0] = st);
            c.node(leader).transferLeadershipTo(c.peer(rest.get(0)), st -> transfer[0] = st);
            c.runFor(T / 10);
            assertNull(read[0], "the read was answered without a quorum; " + c.replayHint());
            assertNull(transfer[0], "the transfer ended before its target could take over; " + c.replayHint());

            c.node(leader).shutdown(null);
            // Well before the check-quorum step-down or the transfer's deadline (one election timeout).
            assertTrue(c.runUntil(() -> read[0] != null && transfer[0] != null, T / 3),
                    "shutdown left a caller waiting: read " + read[0] + ", transfer " + transfer[0] + "; " + c.replayHint());
            assertFalse(read[0].isOk(), "a read was served by a leader that shut down: " + read[0]);
            assertFalse(transfer[0].isOk(), "a transfer succeeded on a leader that shut down: " + transfer[0]);
        }
    }
}
