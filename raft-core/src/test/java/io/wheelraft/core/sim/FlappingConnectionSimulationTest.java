package io.wheelraft.core.sim;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection between the live leader and one follower that breaks and heals over and over
 * (a flaky link, a proxy restarting) must not cost an election: the follower that hears of the
 * break pre-votes at once, but the other voters still hear the leader, hold their answers for
 * a moment and refuse, and the next heartbeat clears the follower's mark. No leadership
 * ping-pong, no term change, and the client load keeps being acknowledged.
 *
 * <p>{@code -Dwheelraft.sim.seed=S} replays one seed; {@code -Dwheelraft.flap.seeds=N} sets how
 * many clusters per configuration (default 6).
 */
class FlappingConnectionSimulationTest {

    private static List<Long> seeds() {
        String one = System.getProperty("wheelraft.sim.seed");
        if (one != null) {
            return List.of(Long.parseLong(one));
        }
        List<Long> out = new ArrayList<>();
        for (long s = 1; s <= Integer.getInteger("wheelraft.flap.seeds", 6); s++) {
            out.add(s);
        }
        return out;
    }

    @Test
    void aFlappingLeaderConnectionCausesNoElection() {
        for (int t : new int[] {1000, 150}) {
            for (int size : new int[] {3, 5}) {
                for (long seed : seeds()) {
                    flapFor(seed, size, t, 60 * t);
                }
            }
        }
    }

    /**
     * Breaks the leader's connection to a random follower every 0.02T..0.3T, for {@code ms}
     * virtual ms, and asserts the leader and its term never change.
     */
    private static void flapFor(long seed, int size, int t, long ms) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, size, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(t));
        CounterWorkload load = new CounterWorkload(c, 2, 4 * t);
        assertTrue(c.runUntil(() -> {
            load.tick();
            return c.leaderIndex() >= 0;
        }, 20L * t), "no first leader; " + c.replayHint());
        int leader = c.leaderIndex();
        long term = c.node(leader).status().term();
        long acknowledgedBefore = load.acknowledged();
        long end = c.nowMs() + ms;
        long nextBreak = c.nowMs();
        int breaks = 0;
        while (c.nowMs() < end) {
            if (c.nowMs() >= nextBreak) {
                int follower = (leader + 1 + c.random().nextInt(size - 1)) % size;
                c.breakConnection(leader, follower);
                breaks++;
                nextBreak = c.nowMs() + t / 50 + c.random().nextInt(t * 3 / 10);
            }
            load.tick();
            c.runFor(1);
        }
        String where = size + " nodes, T=" + t + ", " + breaks + " breaks; " + c.replayHint();
        assertEquals(1, c.leaderTerms(), "an election while only a connection flapped: " + where);
        assertEquals(leader, c.leaderIndex(), "leadership moved: " + where);
        assertEquals(term, c.node(leader).status().term(), "the leader's term changed (a disruptive candidate): " + where);
        assertTrue(load.acknowledged() > acknowledgedBefore + 10, "the load stalled: " + where);
    }
}
