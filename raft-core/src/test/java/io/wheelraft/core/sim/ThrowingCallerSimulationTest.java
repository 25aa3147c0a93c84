package io.wheelraft.core.sim;

import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Role;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A caller's closure that throws is the caller's bug, and must not cut short the node's own work
 * around it: here a read's closure throws when a leader that lost its quorum fails the read, in
 * the same batch in which the leader steps down. The step-down must still be seen (the node no
 * longer says it leads), as must every other closure of that batch.
 */
class ThrowingCallerSimulationTest {

    private static final int T = 150;
    private static final int SEEDS = 10;

    @Test
    void aThrowingReadClosureDoesNotStopALeaderFromSteppingDown() {
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
            c.partition(List.of(leader), rest);

            boolean[] secondFailed = new boolean[1];
            c.node(leader).readIndex((st, index) -> {
                throw new IllegalStateException("a caller's bug");
            });
            c.node(leader).readIndex((st, index) -> secondFailed[0] = !st.isOk());
            // The leader cannot confirm the reads; check-quorum makes it step down within a few timeouts.
            assertTrue(c.runUntil(() -> c.node(leader).status().role() != Role.LEADER && !c.node(leader).isLeader(), 10L * T),
                    "the isolated leader still says it leads after a read's closure threw; " + c.replayHint());
            assertTrue(secondFailed[0], "the other read of the batch was never failed; " + c.replayHint());
        }
    }
}
