package io.wheelraft.core.sim;

import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Voters that answer later than the first rounds wait for them (busy processes after a failover of
 * hundreds of groups): the vote timeout grows with the election backoff, up to an election timeout,
 * so a group still elects a leader instead of counting every late grant as a refusal and asking
 * again for ever. Election safety is checked at every simulated ms.
 */
class SlowVotersSimulationTest {

    private static final int T = 200;

    @Test
    void aGroupWhoseVotersAnswerLaterThanHalfAnElectionTimeoutStillElectsALeaderAndCommits() {
        for (long seed : new long[] {3, 4, 5}) {
            CommittedLog log = new CommittedLog("seed " + seed);
            SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, log), o -> o.electionTimeoutMs(T).heartbeatDivisor(10));
            for (int i = 0; i < 3; i++) {
                // Within an append's deadline (T), past the first rounds' vote deadline (T/2).
                c.network().slowAnswersFrom(c.peer(i).endpoint(), 7 * T / 10);
            }
            assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 40L * T), "no leader while every answer takes 0.7 T; " + c.replayHint());
            boolean[] ok = new boolean[1];
            c.node(c.leaderIndex()).apply(new Task(CounterFsm.delta(1), st -> ok[0] = st.isOk()));
            assertTrue(c.runUntil(() -> ok[0], 10L * T), "the new leader did not commit; " + c.replayHint());
        }
    }
}
