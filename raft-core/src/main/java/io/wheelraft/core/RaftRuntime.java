package io.wheelraft.core;

import io.wheelraft.core.node.DefaultNodeRuntime;
import io.wheelraft.core.node.NodeRuntime;
import io.wheelraft.timer.Timer;

import java.util.Objects;

/**
 * The threads and the timing wheel that the nodes of one process share: a pool for the nodes'
 * Raft lanes, one for their disk writes, one for their state machines, and the wheel that fires
 * their election and heartbeat timers. No thread per node, per peer or per timer (see
 * docs/threads.md). Most services use {@link #shared()}; an embedder or a test that wants its
 * own pool sizes or its own wheel makes one with {@link #create} and closes it once the nodes on
 * it have shut down. Thread-safe.
 */
public final class RaftRuntime implements AutoCloseable {

    private static final RaftRuntime SHARED = new RaftRuntime(null);

    /** The pools this instance made and closes; null for the shared runtime, which is never closed. */
    private final DefaultNodeRuntime owned;

    private RaftRuntime(DefaultNodeRuntime owned) {
        this.owned = owned;
    }

    /**
     * The process-wide runtime: the shared timing wheel and pools sized by the number of cores,
     * created on first use and never closed.
     */
    public static RaftRuntime shared() {
        return SHARED;
    }

    /**
     * A runtime of its own: {@code timer} fires the nodes' timers (it stays the caller's to stop),
     * and the three pools have the given numbers of threads.
     *
     * @throws IllegalArgumentException naming the first thread count that is not positive
     */
    public static RaftRuntime create(Timer timer, int raftThreads, int diskThreads, int applyThreads) {
        Objects.requireNonNull(timer, "timer");
        requirePositive("raftThreads", raftThreads);
        requirePositive("diskThreads", diskThreads);
        requirePositive("applyThreads", applyThreads);
        return new RaftRuntime(new DefaultNodeRuntime(timer, raftThreads, diskThreads, applyThreads));
    }

    private static void requirePositive(String name, int threads) {
        if (threads <= 0) {
            throw new IllegalArgumentException(name + " must be at least 1, was " + threads);
        }
    }

    /** What the nodes run on; resolved at each start so that the shared pools are made only when used. */
    NodeRuntime nodeRuntime() {
        return owned != null ? owned : DefaultNodeRuntime.shared();
    }

    /** Shuts this runtime's pools down (tasks already queued still run); nothing for {@link #shared()}. */
    @Override
    public void close() {
        if (owned != null) {
            owned.close();
        }
    }
}
