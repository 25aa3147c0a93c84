package io.wheelraft.core.sim;

import io.wheelraft.core.node.NodeRuntime;
import io.wheelraft.timer.Clock;
import io.wheelraft.timer.HashedWheelTimer;
import io.wheelraft.timer.ManualClock;
import io.wheelraft.timer.Timer;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The {@link NodeRuntime} of a simulated cluster: a manual clock driving a hashed wheel (no
 * thread: due timeouts fire inside {@link ManualClock#advance}), and one {@link SimExecutor}
 * standing in for every pool. Only the simulation thread touches it.
 */
public final class SimRuntime implements NodeRuntime {

    private final ManualClock clock = new ManualClock();
    private final HashedWheelTimer timer;
    private final SimExecutor executor = new SimExecutor();
    private final java.util.Random diskRandom;
    /**
     * The disk: each turn of a disk lane starts 1 to 5 simulated milliseconds later, so a write is
     * in flight long enough for a crash to lose it (as an unsynced write is lost by a real process).
     */
    private final Executor disk = task -> timer().newTimeout(t -> executor.execute(task), 1 + diskRandom().nextInt(5), TimeUnit.MILLISECONDS);

    public SimRuntime(long seed) {
        this.diskRandom = new java.util.Random(seed);
        this.timer = HashedWheelTimer.builder().drivenBy(clock).tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(1024).build();
    }

    private java.util.Random diskRandom() {
        return diskRandom;
    }

    /** Every write runs on the simulated disk lanes, so a seed replays the same run. */
    @Override
    public boolean storageThreadsAllowed() {
        return false;
    }

    public ManualClock manualClock() {
        return clock;
    }

    public SimExecutor executor() {
        return executor;
    }

    /** Moves virtual time forward one millisecond, firing due timeouts, then runs all work they caused. */
    public void step() {
        executor.drain();
        clock.advanceMillis(1);
        executor.drain();
    }

    public long nowMs() {
        return clock.millis();
    }

    @Override
    public Timer timer() {
        return timer;
    }

    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public Executor raftPool() {
        return executor;
    }

    @Override
    public Executor diskPool() {
        return disk;
    }

    @Override
    public Executor applyPool() {
        return executor;
    }

}
