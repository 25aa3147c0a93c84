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
}
