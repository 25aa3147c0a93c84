package io.wheelraft.core.sim;

import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The classic stale read (thesis §6.4): a leader cut off from the majority keeps believing it
 * leads for a while; the majority elects a new leader and commits a write. A read served by the
 * old leader after that write completed would return the old value. Over many seeds, the old
 * leader's read must fail or include the write, with ReadIndex and with leases, chosen by the
 * node's options or per call against them.
 */
class StaleReadSimulationTest {

    private static final int T = 150;

    /** {@code perCall} null: the read uses {@code Node.readIndex(done)}, i.e. the node's option. */
    @ParameterizedTest(name = "node {0}, call {1}")
    @CsvSource({"READ_INDEX,", "LEASE,", "READ_INDEX,LEASE", "LEASE,READ_INDEX"})
    void partitionedOldLeaderNeverServesAStaleRead(ReadOnlyOption option, ReadOnlyOption perCall) {
        int staleWindowsHit = 0;
        for (long seed = 1; seed <= 60; seed++) {
            CommittedLog committed = new CommittedLog("seed " + seed);
            SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed),
                    o -> o.electionTimeoutMs(T).readOnlyOption(option).leaseClockDriftMs(5));
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 10L * T), c.replayHint());
            int old = c.leaderIndex();
            c.node(old).apply(new Task(CounterFsm.delta(1), null));
            assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(old)).value() == 1, 10L * T), c.replayHint());
            c.runFor(c.random().nextInt(T / 10)); // vary where in the heartbeat cycle the cut lands

            List<Integer> others = new java.util.ArrayList<>(List.of(0, 1, 2));
            others.remove(Integer.valueOf(old));
            c.partition(List.of(old), others);
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0 && c.leaderIndex() != old, 20L * T), "no new leader; " + c.replayHint());
            int fresh = c.leaderIndex();
            boolean[] written = new boolean[1];
            c.node(fresh).apply(new Task(CounterFsm.delta(10), s -> written[0] = s.isOk()));
            assertTrue(c.runUntil(() -> written[0], 20L * T), "write on the new leader did not commit; " + c.replayHint());

            // The write has completed: any read that starts now must see 11.
            if (c.node(old).isLeader()) {
                staleWindowsHit++;
            }
            CounterFsm oldFsm = (CounterFsm) c.stateMachine(old);
            Status[] status = new Status[1];
            long[] seen = new long[1];
            io.wheelraft.core.ReadIndexClosure read = (s, index) -> {
                status[0] = s;
                seen[0] = oldFsm.value();
            };
            if (perCall == null) {
                c.node(old).readIndex(read);
            } else {
                c.node(old).readIndex(perCall, read);
            }
            c.runFor(3L * T);
            if (status[0] != null && status[0].isOk() && seen[0] != 11) {
                fail("old leader served a stale read: value " + seen[0] + " after the write made it 11 (node " + option + ", call " + perCall + "); " + c.replayHint());
            }
            c.heal();
            assertTrue(c.runUntil(() -> oldFsm.value() == 11, 20L * T), "old leader did not catch up; " + c.replayHint());
            assertEquals(11, ((CounterFsm) c.stateMachine(fresh)).value());
        }
        // The scenario must actually exercise the dangerous window, or the test proves nothing.
        assertTrue(staleWindowsHit > 0, "no seed read while the old leader still believed it led");
    }
}
