package io.wheelraft.core.node;

import io.wheelraft.core.Role;
import io.wheelraft.core.sim.SimRuntime;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which of a node's timers run in which role, on the simulation's manual clock. */
class NodeTimersTest {

    private static final int T = 1000;
    private static final int HEARTBEAT = 100;

    private final SimRuntime runtime = new SimRuntime(1);
    /** The core's election backoff as the timer reads it. */
    private int backoff = 1;
    /** When the election timer fired (virtual ms). */
    private final List<Long> electionFirings = new java.util.ArrayList<>();
    private final NodeTimers timers = new NodeTimers("g/a:1", runtime.timer(), runtime.manualClock(), new Random(1), T, HEARTBEAT,
            60, () -> 0L, () -> backoff, new SerialLane("g/a:1", runtime.executor()), new NodeTimers.Events() {
                @Override
                public void electionTimeout() {
                    electionFirings.add(runtime.nowMs());
                }

                @Override
                public void voteTimeout() {
                }

                @Override
                public void stepDownCheck() {
                }

                @Override
                public void heartbeat() {
                }

                @Override
                public void snapshotDue() {
                }
            });

    private List<Boolean> running() {
        return List.of(timers.election.isRunning(), timers.vote.isRunning(), timers.stepDown.isRunning(), timers.heartbeat.isRunning());
    }

    @Test
    void eachRoleRunsItsOwnTimersAndStopsTheOthers() {
        timers.enter(Role.FOLLOWER);
        assertEquals(List.of(true, false, false, false), running(), "follower: election only");
        timers.enter(Role.CANDIDATE);
        assertEquals(List.of(false, true, false, false), running(), "candidate: vote only");
        timers.enter(Role.LEADER);
        assertEquals(List.of(false, false, true, true), running(), "leader: step-down and heartbeat");
        timers.enter(Role.LEARNER);
        assertEquals(List.of(true, false, false, false), running(), "learner: election, like a follower");
    }

    @Test
    void theSnapshotTimerIsLeftAsItIsByRoleChanges() {
        timers.snapshot.start();
        timers.enter(Role.LEADER);
        timers.enter(Role.FOLLOWER);
        assertTrue(timers.snapshot.isRunning());
    }

    @Test
    void aStoppedNodeDestroysEveryTimer() {
        timers.enter(Role.LEADER);
        timers.snapshot.start();
        timers.enter(Role.SHUTDOWN);
        assertEquals(List.of(false, false, false, false), running());
        assertFalse(timers.snapshot.isRunning());
        timers.enter(Role.FOLLOWER); // destroyed timers stay stopped
        assertFalse(timers.election.isRunning());
    }
    /**
     * Once the leader has been lost for longer than any draw (2T), each further election timeout
     * is a fresh draw of T to 2T, stretched by the core's backoff: with backoff 4 the firings are
     * 4T to 8T apart.
     */
    @Test
    void theElectionTimeoutAfterTheLeaderIsLostIsStretchedByTheBackoff() {
        timers.enter(Role.FOLLOWER); // the leader was last heard at 0
        int firstLate = firingsAfter(2 * T, 3);
        for (int i = firstLate + 1; i < electionFirings.size(); i++) {
            long gap = electionFirings.get(i) - electionFirings.get(i - 1);
            assertTrue(gap >= T && gap < 2 * T, "without backoff the gap is T to 2T: " + electionFirings);
        }
        backoff = 4;
        int stretched = firingsAfter(electionFirings.get(electionFirings.size() - 1), 4);
        // The firing drawn before the change keeps its gap; the ones after it are stretched.
        for (int i = stretched + 1; i < electionFirings.size(); i++) {
            long gap = electionFirings.get(i) - electionFirings.get(i - 1);
            assertTrue(gap >= 4 * T && gap < 8 * T, "with backoff 4 the gap is 4T to 8T: " + electionFirings);
        }
    }

    /** Steps virtual time until {@code count} firings happened after {@code fromMs}; returns the index of the first of them. */
    private int firingsAfter(long fromMs, int count) {
        int first = -1;
        for (long guard = 0; guard < 100L * T; guard++) {
            runtime.step();
            if (first < 0 && !electionFirings.isEmpty() && electionFirings.get(electionFirings.size() - 1) > fromMs) {
                first = electionFirings.size() - 1;
            }
            if (first >= 0 && electionFirings.size() - first >= count) {
                return first;
            }
        }
        throw new AssertionError("the election timer fired only " + electionFirings);
    }
}
