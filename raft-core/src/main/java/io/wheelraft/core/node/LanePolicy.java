package io.wheelraft.core.node;

import io.wheelraft.core.NodeOptions;

import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Decides, in one place, which threads run a node's work. A node has four lanes, each a
 * {@link SerialLane} (one task at a time, in order) over a pool of its {@link NodeRuntime}:
 * <ul>
 *   <li>the Raft lane, on the raft pool: every decision of the core and the carrying out of its
 *       batches. Work on the replication path (an incoming AppendEntries, an append answer, a
 *       disk acknowledgement, a batch of proposals) may run on the thread that delivers it when
 *       the lane is idle ({@link SerialLane#executeHere}); vote answers are always queued, as
 *       winning a round fsyncs the new term and must not stall a transport I/O thread;</li>
 *   <li>the disk lane, on the disk pool: log truncations and resets, and appends unless the
 *       storage makes them durable together with other groups' on threads of its own
 *       ({@link #appendsTogether}); with {@link NodeOptions#writeInline()}, a follower's sparse
 *       append runs on the Raft lane's thread instead ({@link #sparseWriteClock()});</li>
 *   <li>the snapshot lane, on the disk pool: snapshot chunk reads and writes;</li>
 *   <li>the apply lane, on the apply pool: the user's state machine; with
 *       {@link NodeOptions#applyInline()} the committing thread applies when the lane is idle.</li>
 * </ul>
 * Immutable; the lanes it makes are thread-safe.
 */
final class LanePolicy {

    private final String name;
    private final NodeRuntime runtime;
    private final boolean writeInline;
    private final boolean applyInline;

    LanePolicy(String name, NodeRuntime runtime, NodeOptions options) {
        this.name = name;
        this.runtime = runtime;
        this.writeInline = options.writeInline();
        this.applyInline = options.applyInline();
    }

    /** @param failureHandler gets what a task throws (a storage failure stops the node) */
    SerialLane raftLane(Predicate<Throwable> failureHandler) {
        return new SerialLane(name, runtime.raftPool(), failureHandler);
    }

    SerialLane diskLane() {
        return new SerialLane(name, "-disk", runtime.diskPool(), t -> false);
    }

    SerialLane snapshotLane() {
        return new SerialLane(name, "-snapshot", runtime.diskPool(), t -> false);
    }

    SerialLane applyLane() {
        return new SerialLane(name, "-apply", runtime.applyPool(), t -> false);
    }

    /**
     * Null when every log write goes to the disk lane; otherwise the clock (nanoseconds) the
     * {@link LogWriter} uses to tell a sparse append, which it then writes on the calling thread.
     */
    LongSupplier sparseWriteClock() {
        return writeInline ? () -> runtime.clock().nanoTime() : null;
    }

    /**
     * Whether the node hands its appends to {@code storage} to be made durable with other groups'
     * (see {@link LogWriter}) rather than writing them on its disk lane.
     */
    boolean appendsTogether(io.wheelraft.core.spi.LogStorage storage) {
        return runtime.storageThreadsAllowed() && storage.appendsTogether();
    }

    /** Whether the thread that commits entries applies them itself when the apply lane is idle. */
    boolean applyOnCommittingThread() {
        return applyInline;
    }
}
