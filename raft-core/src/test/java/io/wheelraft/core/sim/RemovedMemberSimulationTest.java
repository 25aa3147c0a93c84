package io.wheelraft.core.sim;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.function.BiConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node removed from its group stops campaigning, and campaigns again once added back (thesis §4.2.3). */
class RemovedMemberSimulationTest {

    private static final int T = 150;

    private static SimCluster cluster(long seed) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, 3, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(T));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), c.replayHint());
        return c;
    }

    private static Status change(SimCluster c, BiConsumer<Integer, Closure> op) {
        Status[] result = new Status[1];
        op.accept(c.leaderIndex(), s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 40L * T), "membership change never finished; " + c.replayHint());
        return result[0];
    }

    private static long votesBy(SimCluster c, int i) {
        return c.network().voteRequestsSentBy(c.peer(i).endpoint());
    }

    @Test
    void aRemovedFollowerStopsStartingPreVotes() {
        SimCluster c = cluster(31);
        int leader = c.leaderIndex();
        int gone = (leader + 1) % 3;
        Status s = change(c, (l, done) -> c.node(l).removePeer(c.peer(gone), done));
        assertTrue(s.isOk(), s.toString());
        // It never hears from the leader again: within a few election timeouts it tries a
        // pre-vote, is told it was removed, and stops.
        c.runFor(10L * T);
        long settled = votesBy(c, gone);
        assertTrue(settled > 0, "the removed node never noticed it lost its leader");
        c.runFor(40L * T);
        assertEquals(settled, votesBy(c, gone), "the removed node keeps campaigning; " + c.replayHint());
        int terms = c.leaderTerms();
        boolean[] ok = new boolean[1];
        c.node(c.leaderIndex()).apply(new Task(CounterFsm.delta(1), st -> ok[0] = st.isOk()));
        assertTrue(c.runUntil(() -> ok[0], 20L * T), "the remaining two cannot commit");
        assertEquals(terms, c.leaderTerms());
    }

    @Test
    void aRemovedNodeAddedBackCampaignsAgainWhenItLosesItsLeader() {
        SimCluster c = cluster(32);
        int leader = c.leaderIndex();
        int x = (leader + 1) % 3;
        int y = (leader + 2) % 3;
        // The survivor whose failover turn is first campaigns first: with equal logs (the
        // cluster is idle when the leader crashes), the lower id.
        int back = c.peer(x).compareTo(c.peer(y)) < 0 ? x : y;
        assertTrue(change(c, (l, done) -> c.node(l).removePeer(c.peer(back), done)).isOk());
        c.runFor(10L * T);
        long silenced = votesBy(c, back);
        c.runFor(10L * T);
        assertEquals(silenced, votesBy(c, back), "not silenced; " + c.replayHint());
        assertTrue(change(c, (l, done) -> c.node(l).addPeer(c.peer(back), done)).isOk());
        assertTrue(c.runUntil(() -> c.node(back).status().configuration().peers().size() == 3, 20L * T));
        c.runFor(2L * T); // it catches up, and a heartbeat round gives the turns by equal logs, so by id
        int old = c.leaderIndex();
        c.crash(old, true);
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0 && c.leaderIndex() != old, 40L * T), "no new leader; " + c.replayHint());
        assertTrue(votesBy(c, back) > silenced, "the node added back did not campaign when its leader crashed; " + c.replayHint());
    }
}
