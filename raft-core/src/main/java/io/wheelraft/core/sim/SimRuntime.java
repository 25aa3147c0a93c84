package io.wheelraft.core.sim;

import io.wheelraft.core.Task;
import io.wheelraft.core.node.NodeRuntime;
import io.wheelraft.core.node.ProposalQueue;
import io.wheelraft.timer.Clock;
import io.wheelraft.timer.HashedWheelTimer;
import io.wheelraft.timer.ManualClock;
import io.wheelraft.timer.Timer;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The {@link NodeRuntime} of a simulated cluster: a manual clock driving a hashed wheel (no
 * thread: due timeouts fire inside {@link ManualClock#advance}), and one {@link SimExecutor}
 * standing in for every pool. Only the simulation thread touches it.
 */
public final class SimRuntime implements NodeRuntime {

    private final ManualClock clock = new ManualClock();
    private final HashedWheelTimer timer;
    private final SimExecutor executor = new SimExecutor();
    private final ProposalQueue proposals = new ProposalQueue() {
        @Override
        public boolean offer(Consumer<List<Task>> sink, Task task) {
            executor.execute(() -> sink.accept(List.of(task)));
            return true;
        }

        @Override
        public void close() {
        }
    };

    public SimRuntime() {
        this.timer = HashedWheelTimer.builder().clock(clock).tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(1024).build();
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
        return executor;
    }

    @Override
    public Executor applyPool() {
        return executor;
    }

    @Override
    public ProposalQueue proposalQueue() {
        return proposals;
    }
}
