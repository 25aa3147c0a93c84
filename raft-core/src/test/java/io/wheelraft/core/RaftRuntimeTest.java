package io.wheelraft.core;

import io.wheelraft.timer.HashedWheelTimer;
import io.wheelraft.timer.ManualClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RaftRuntime}: the public way to choose the threads and timing wheel of a process's nodes. */
class RaftRuntimeTest {

    private final ManualClock clock = new ManualClock();
    private final HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(clock).build();

    @Test
    void aThreadCountBelowOneIsRefusedNamingThePool() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaftRuntime.create(timer, 2, 0, 2));
        assertTrue(e.getMessage().contains("diskThreads") && e.getMessage().contains("0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RaftRuntime.create(timer, -1, 2, 2));
        assertTrue(e.getMessage().contains("raftThreads") && e.getMessage().contains("-1"), e.getMessage());
        assertThrows(NullPointerException.class, () -> RaftRuntime.create(null, 1, 1, 1));
    }

    @Test
    void anOwnRuntimeRunsOnItsOwnTimerAndTheSharedOneIsTheProcesssDefault() {
        try (RaftRuntime own = RaftRuntime.create(timer, 1, 1, 1)) {
            assertSame(timer, own.nodeRuntime().timer());
            assertNotSame(RaftRuntime.shared().nodeRuntime(), own.nodeRuntime());
        }
        assertSame(RaftRuntime.shared(), RaftRuntime.shared());
        RaftRuntime.shared().close(); // a no-op: nodes elsewhere in the process keep their pools
        assertSame(RaftRuntime.shared().nodeRuntime(), RaftRuntime.shared().nodeRuntime());
    }

    @Test
    void nodesReadTheClockTheirTimerRunsOn() {
        try (RaftRuntime own = RaftRuntime.create(timer, 1, 1, 1)) {
            assertSame(clock, own.nodeRuntime().clock(), "a node would schedule on the manual clock and read another");
        }
        assertSame(io.wheelraft.timer.Timers.shared().clock(), RaftRuntime.shared().nodeRuntime().clock());
    }
}
