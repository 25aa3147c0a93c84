package io.wheelraft.core.node;

import io.wheelraft.timer.Clock;
import io.wheelraft.timer.Timer;

import java.util.concurrent.Executor;

/**
 * What the nodes of one process share: the timing wheel, the clock, and bounded pools on which
 * each node's lanes run (Raft state, disk writes, applying). No thread per node, per peer or per
 * timer: see docs/threads.md. Production uses {@link DefaultNodeRuntime}; the simulation a
 * deterministic single-threaded one.
 */
public interface NodeRuntime {

    Timer timer();

    Clock clock();

    /** Runs each node's Raft lane (consensus decisions; never blocks). */
    Executor raftPool();

    /** Runs each node's disk lane (log appends with fsync, term/vote writes). */
    Executor diskPool();

    /** Runs each node's apply lane (the user's state machine). */
    Executor applyPool();

    /**
     * Whether a storage may make writes durable and acknowledge them on threads of its own
     * ({@link io.wheelraft.core.spi.LogStorage#appendsTogether()}). The simulation says no: every
     * step must run on its executors, in the order it picks, for a run to be replayable from its
     * seed; its nodes write on their disk lanes.
     */
    default boolean storageThreadsAllowed() {
        return true;
    }
}
