package io.wheelraft.core.sim;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Membership changes by joint consensus (Raft §6) in the simulated cluster. */
class MembershipSimulationTest {

    private static final int T = 150;

    private static SimCluster cluster(long seed, int size, int voters) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, size, voters, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(T));
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0, 20L * T), c.replayHint());
        return c;
    }

    private static Status change(SimCluster c, java.util.function.BiConsumer<Integer, io.wheelraft.core.Closure> op) {
        Status[] result = new Status[1];
        op.accept(c.leaderIndex(), s -> result[0] = s);
        assertTrue(c.runUntil(() -> result[0] != null, 40L * T), "membership change never finished; " + c.replayHint());
        return result[0];
    }

    @Test
    void addedPeerCatchesUpAsLearnerThenCountsInQuorums() {
        SimCluster c = cluster(11, 4, 3);
        int leader = c.leaderIndex();
        for (int k = 0; k < 30; k++) {
            c.node(leader).apply(new Task(CounterFsm.delta(1), null));
        }
        Status s = change(c, (l, done) -> c.node(l).addPeer(c.peer(3), done));
        assertTrue(s.isOk(), s.toString());
        assertTrue(c.runUntil(() -> ((CounterFsm) c.stateMachine(3)).value() == 30, 20L * T), "new peer did not catch up");
        for (int i = 0; i < 4; i++) {
            int n = i;
            assertTrue(c.runUntil(() -> c.node(n).status().configuration().peers().size() == 4, 20L * T), "node " + i + " config");
        }
        // With 4 voters the quorum is 3: losing two of the original followers must stop commits...
        int l = c.leaderIndex();
        List<Integer> originals = new java.util.ArrayList<>(List.of(0, 1, 2));
        originals.remove(Integer.valueOf(l));
        c.crash(originals.get(0), true);
        c.crash(originals.get(1), true);
        boolean[] committed = new boolean[1];
        c.node(l).apply(new Task(CounterFsm.delta(1), st -> committed[0] = st.isOk()));
        c.runFor(5L * T);
        assertFalse(committed[0], "committed with 2 of 4 voters");
        // ...and bringing one back (3 of 4, the new peer among them) lets it commit.
        c.restart(originals.get(0));
        assertTrue(c.runUntil(() -> committed[0] || c.leaderIndex() >= 0 && ((CounterFsm) c.stateMachine(3)).value() >= 31, 40L * T),
                "no progress with 3 of 4 voters; " + c.replayHint());
    }

    @Test
    void addingACurrentMemberSucceedsAndChangesNothing() {
        SimCluster c = cluster(12, 3, 3);
        Configuration before = c.node(c.leaderIndex()).status().configuration();
        Status s = change(c, (l, done) -> c.node(l).addPeer(c.peer((l + 1) % 3), done));
        assertTrue(s.isOk(), s.toString());
        assertEquals(before, c.node(c.leaderIndex()).status().configuration());
    }

    @Test
    void removingTheLeaderCompletesThenItStepsDownWithoutDisruptingTheRest() {
        SimCluster c = cluster(13, 3, 3);
        int old = c.leaderIndex();
        Status s = change(c, (l, done) -> c.node(l).removePeer(c.peer(l), done));
        assertTrue(s.isOk(), s.toString());
        assertTrue(c.runUntil(() -> c.leaderIndex() >= 0 && c.leaderIndex() != old, 20L * T), "no new leader after removal");
        int terms = c.leaderTerms();
        c.runFor(20L * T);
        assertEquals(terms, c.leaderTerms(), "the removed node disrupted the cluster");
        assertFalse(c.node(old).isLeader());
        int leader = c.leaderIndex();
        assertEquals(2, c.node(leader).status().configuration().peers().size());
        boolean[] ok = new boolean[1];
        c.node(leader).apply(new Task(CounterFsm.delta(5), st -> ok[0] = st.isOk()));
        assertTrue(c.runUntil(() -> ok[0], 20L * T), "two remaining voters cannot commit");
    }

    @Test
    void aSecondChangeWhileOneIsInProgressIsRefused() {
        SimCluster c = cluster(14, 5, 3);
        int l = c.leaderIndex();
        Status[] first = new Status[1];
        Status[] second = new Status[1];
        c.node(l).addPeer(c.peer(3), st -> first[0] = st);
        c.node(l).addPeer(c.peer(4), st -> second[0] = st);
        assertTrue(c.runUntil(() -> first[0] != null && second[0] != null, 40L * T));
        assertTrue(first[0].isOk(), first[0].toString());
        assertEquals(RaftError.CONFIGURATION_CHANGING, second[0].code());
    }

    @Test
    void aPeerThatNeverAnswersFailsTheAddWithoutChangingVoters() {
        SimCluster c = cluster(15, 4, 3);
        c.crash(3, true);
        int l = c.leaderIndex();
        Status s = change(c, (leader, done) -> c.node(leader).addPeer(c.peer(3), done));
        assertEquals(RaftError.TIMEOUT, s.code(), s.toString());
        c.runFor(5L * T);
        assertEquals(3, c.node(c.leaderIndex()).status().configuration().peers().size());
        assertNotEquals(-1, l);
    }
}
