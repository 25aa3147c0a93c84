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
    private final NodeTimers timers = new NodeTimers("g/a:1", runtime.timer(), runtime.manualClock(), new Random(1), T, HEARTBEAT,
            60, runtime::nowMs, new SerialLane("g/a:1", runtime.executor()), new NodeTimers.Events() {
                @Override
                public void electionTimeout() {
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
}
