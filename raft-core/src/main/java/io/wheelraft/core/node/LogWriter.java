package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongSupplier;

/**
 * Writes a node's log on its disk lane, off the Raft lane. Writes queued while the disk was busy
 * are merged into one {@link LogStorage#append} (group commit: one fsync for many batches);
 * a write that truncates first starts a new group. Each finished group is acknowledged with its
 * last index and term; a failure is reported and nothing after it is written.
 *
 * <p>Prefix truncations (log compaction after a snapshot) and resets (after installing a
 * snapshot from the leader) are queued in the same order, so they never overtake or undo an
 * append queued before them. A reset starts a new generation: acknowledgements of writes queued
 * before it are tagged with the old one, so the Raft lane can ignore them (the reset wiped them,
 * even where the same entries were queued again afterwards).
 *
 * <p>{@link #submit}, {@link #submitTruncatePrefix}, {@link #submitReset} and
 * {@link #generation()} are called from the Raft lane only.
 */
final class LogWriter {

    /** Acknowledgement of a durable write. */
    interface Listener {
        void onWritten(long lastIndex, long lastTerm, long generation);

        void onWriteFailed(RuntimeException error);
    }

    private enum Kind { APPEND, TRUNCATE_PREFIX, RESET }

    /** {@code index}: truncate after it first (-1: none) for appends; first kept / next index otherwise. */
    private record Write(Kind kind, long index, List<LogEntry> entries, long generation, Runnable onDone) {
    }

    private final LogStorage storage;
    private final SerialLane diskLane;
    private final Listener listener;
    private final Queue<Write> queue = new ConcurrentLinkedQueue<>();
    /** Null: every write goes to the disk pool. Otherwise the clock that tells sparse writes apart. */
    private final LongSupplier inlineClock;
    private long generation;
    /** When the last append was submitted (Raft lane only). */
    private long lastSubmitNanos;
    private boolean submittedBefore;
    /** How long the last group commit took (written on the disk lane, read on the Raft lane). */
    private volatile long lastWriteNanos;
    private volatile boolean failed;

    LogWriter(LogStorage storage, SerialLane diskLane, Listener listener) {
        this(storage, diskLane, listener, null);
    }

    /**
     * @param inlineClock non-null to let sparse appends run on the submitting thread (see
     *                    {@link LanePolicy#sparseWriteClock()}); its nanoseconds
     *                    measure how far apart appends come and how long a write takes
     */
    LogWriter(LogStorage storage, SerialLane diskLane, Listener listener, LongSupplier inlineClock) {
        this.storage = storage;
        this.diskLane = diskLane;
        this.listener = listener;
        this.inlineClock = inlineClock;
    }

    /** Acknowledgements tagged with an older generation are for writes a reset has since wiped. */
    long generation() {
        return generation;
    }

    /** Queues a write; called from the Raft lane. */
    void submit(long truncateAfter, List<LogEntry> entries) {
        submit(truncateAfter, entries, false);
    }

    /**
     * Queues a write; called from the Raft lane. With {@code mayRunHere}, and when this writer was
     * made with an inline clock, a <em>sparse</em> append runs at once on the calling thread
     * (if the disk lane is idle) instead of waking a disk thread. Sparse means the previous append
     * was submitted more than twice the last write's duration ago: writes are not coming often
     * enough to share an fsync, so a group commit has nothing to gain from waiting on the disk
     * lane. Under load the gap is short and the hand-off (and its group commit) is kept.
     */
    void submit(long truncateAfter, List<LogEntry> entries, boolean mayRunHere) {
        Write w = new Write(Kind.APPEND, truncateAfter, entries, generation, null);
        if (inlineClock == null) {
            enqueue(w);
            return;
        }
        long now = inlineClock.getAsLong();
        boolean sparse = !submittedBefore || now - lastSubmitNanos > 2 * lastWriteNanos;
        submittedBefore = true;
        lastSubmitNanos = now;
        if (mayRunHere && sparse) {
            queue.add(w);
            diskLane.executeHere(this::flush);
        } else {
            enqueue(w);
        }
    }

    /** Queues log compaction: drop entries before {@code firstIndexKept}. */
    void submitTruncatePrefix(long firstIndexKept) {
        enqueue(new Write(Kind.TRUNCATE_PREFIX, firstIndexKept, List.of(), generation, null));
    }

    /** Queues emptying the log to continue at {@code nextIndex}; {@code onDone} runs on the disk lane once it is durable. */
    void submitReset(long nextIndex, Runnable onDone) {
        generation++;
        enqueue(new Write(Kind.RESET, nextIndex, List.of(), generation, onDone));
    }

    private void enqueue(Write w) {
        queue.add(w);
        diskLane.execute(this::flush);
    }

    private void flush() {
        List<LogEntry> group = new ArrayList<>();
        long groupGeneration = -1;
        Write w;
        while (!failed && (w = queue.peek()) != null) {
            boolean startsGroup = w.kind() != Kind.APPEND || w.index() >= 0;
            if (startsGroup && !group.isEmpty()) {
                break; // a truncation or reset must not be merged behind entries it would affect
            }
            queue.poll();
            try {
                switch (w.kind()) {
                    case TRUNCATE_PREFIX -> storage.truncatePrefix(w.index());
                    case RESET -> storage.reset(w.index());
                    case APPEND -> {
                        if (w.index() >= 0) {
                            storage.truncateSuffix(w.index());
                        }
                    }
                }
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            if (w.onDone() != null) {
                w.onDone().run();
            }
            group.addAll(w.entries());
            if (!w.entries().isEmpty()) {
                groupGeneration = w.generation();
            }
        }
        if (group.isEmpty()) {
            return;
        }
        long started = inlineClock == null ? 0 : inlineClock.getAsLong();
        try {
            storage.append(group);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        if (inlineClock != null) {
            lastWriteNanos = inlineClock.getAsLong() - started;
        }
        LogEntry last = group.get(group.size() - 1);
        listener.onWritten(last.getIndex(), last.getTerm(), groupGeneration);
        if (!queue.isEmpty()) {
            diskLane.execute(this::flush);
        }
    }

    /** Drops queued writes and writes nothing more (a simulated process death loses unsynced data). */
    void halt() {
        failed = true;
        queue.clear();
    }

    private void fail(RuntimeException e) {
        failed = true;
        queue.clear();
        listener.onWriteFailed(e);
    }

}
