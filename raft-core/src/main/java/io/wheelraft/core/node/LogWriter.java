package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Writes a node's log off the Raft lane, one write at a time and in order. Appends queued while a
 * write was under way are merged into the next (group commit: one sync for many batches); a write
 * that truncates first starts a new one. Each finished append is acknowledged with its last index
 * and term; a failure is reported and nothing after it is written.
 *
 * <p>Where a write runs: with a storage that {@linkplain LogStorage#appendsTogether() appends
 * together} (RocksDB), an append is encoded on the submitting thread and handed to the storage,
 * which makes it durable with other groups' writes and acknowledges it on its own thread; no
 * thread of this node waits for the disk. Otherwise appends run on the disk lane. With an inline
 * clock, a <em>sparse</em> append runs on the submitting thread at once (see {@link #submit}).
 *
 * <p>Prefix truncations (log compaction after a snapshot) and resets (after installing a
 * snapshot from the leader) run on the disk lane, queued in the same order, so they never overtake
 * or undo an append queued before them. A reset starts a new generation: acknowledgements of
 * writes queued before it are tagged with the old one, so the Raft lane can ignore them (the reset
 * wiped them, even where the same entries were queued again afterwards).
 *
 * <p>{@link #submit}, {@link #submitTruncatePrefix}, {@link #submitReset} and
 * {@link #generation()} are called from the Raft lane only; the rest is thread-safe.
 */
final class LogWriter {

    /** Acknowledgement of a durable write. */
    interface Listener {
        void onWritten(long lastIndex, long lastTerm, long generation);

        void onWriteFailed(RuntimeException error);
    }

    private enum Kind { APPEND, TRUNCATE_PREFIX, RESET }

    /**
     * {@code index}: truncate after it first (-1: none) for appends; first kept / next index
     * otherwise. What one write does is a {@code Write} too: a truncation or reset alone, or
     * appends merged, tagged with the generation of the last of them that had entries.
     */
    private record Write(Kind kind, long index, List<LogEntry> entries, long generation, Runnable onDone) {
    }

    private final LogStorage storage;
    private final SerialLane diskLane;
    private final Listener listener;
    private final boolean together;
    /** Writes not yet started; guarded by itself. */
    private final ArrayDeque<Write> queue = new ArrayDeque<>();
    /** A write is under way (its owner starts the next when it ends); guarded by {@link #queue}. */
    private boolean busy;
    /** Null: no append runs on the submitting thread. Otherwise the clock that tells sparse writes apart. */
    private final LongSupplier inlineClock;
    private long generation;
    /** When the last append was submitted (Raft lane only). */
    private long lastSubmitNanos;
    private boolean submittedBefore;
    /** How long the last append took to become durable (written by whoever finished it). */
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
        this(storage, diskLane, listener, inlineClock, storage.appendsTogether());
    }

    /** @param together hand appends to the storage ({@link LogStorage#appendAsync}) rather than the disk lane */
    LogWriter(LogStorage storage, SerialLane diskLane, Listener listener, LongSupplier inlineClock, boolean together) {
        this.storage = storage;
        this.diskLane = diskLane;
        this.listener = listener;
        this.inlineClock = inlineClock;
        this.together = together;
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
     * made with an inline clock, a <em>sparse</em> append is written at once on the calling thread
     * (if no write is under way) instead of being handed to another thread. Sparse means the
     * previous append was submitted more than twice the last write's duration ago: writes are not
     * coming often enough to share a sync, so a group commit has nothing to gain from a hand-off.
     * Under load the gap is short and the hand-off (and its group commit) is kept.
     */
    void submit(long truncateAfter, List<LogEntry> entries, boolean mayRunHere) {
        boolean here = false;
        if (inlineClock != null) {
            long now = inlineClock.getAsLong();
            boolean sparse = !submittedBefore || now - lastSubmitNanos > 2 * lastWriteNanos;
            submittedBefore = true;
            lastSubmitNanos = now;
            here = mayRunHere && sparse;
        }
        enqueue(new Write(Kind.APPEND, truncateAfter, entries, generation, null), here);
    }

    /** Queues log compaction: drop entries before {@code firstIndexKept}. */
    void submitTruncatePrefix(long firstIndexKept) {
        enqueue(new Write(Kind.TRUNCATE_PREFIX, firstIndexKept, List.of(), generation, null), false);
    }

    /** Queues emptying the log to continue at {@code nextIndex}; {@code onDone} runs on the disk lane once it is durable. */
    void submitReset(long nextIndex, Runnable onDone) {
        generation++;
        enqueue(new Write(Kind.RESET, nextIndex, List.of(), generation, onDone), false);
    }

    private void enqueue(Write w, boolean here) {
        synchronized (queue) {
            if (failed) {
                return;
            }
            queue.add(w);
            if (busy) {
                return; // the write under way starts this one when it ends
            }
            busy = true;
        }
        if (here) {
            Write step = nextStep();
            if (step != null && runNow(step)) {
                startNext();
            }
        } else {
            startNext();
        }
    }

    /**
     * Takes the next write off the queue, or ends the busy spell; called only by the one who set
     * {@code busy}. Null when there is nothing (more) to write.
     */
    private Write nextStep() {
        synchronized (queue) {
            Write head = queue.peek();
            if (head == null || failed) {
                busy = false;
                return null;
            }
            queue.poll();
            Write w = queue.peek();
            if (head.kind() != Kind.APPEND || w == null || w.kind() != Kind.APPEND || w.index() >= 0) {
                return head; // alone: nothing queued after it can join (no copy of its entries)
            }
            List<LogEntry> entries = new ArrayList<>(head.entries());
            long entriesGeneration = head.generation();
            do {
                queue.poll(); // appends that truncate nothing join the write
                entries.addAll(w.entries());
                if (!w.entries().isEmpty()) {
                    entriesGeneration = w.generation();
                }
            } while ((w = queue.peek()) != null && w.kind() == Kind.APPEND && w.index() < 0);
            return new Write(Kind.APPEND, head.index(), entries, entriesGeneration, null);
        }
    }

    /** Starts the next write where it belongs; the caller holds {@code busy}. */
    private void startNext() {
        if (!together) {
            synchronized (queue) {
                if (queue.isEmpty() || failed) {
                    busy = false; // nothing to wake a disk thread for
                    return;
                }
            }
            diskLane.execute(this::writeNextHere); // takes what is queued when it runs: more to merge
            return;
        }
        Write step = nextStep();
        if (step == null) {
            return;
        }
        if (step.kind() == Kind.APPEND) {
            long started = inlineClock == null ? 0 : inlineClock.getAsLong();
            try {
                storage.appendAsync(step.index(), step.entries(), failure -> {
                    if (failure != null) {
                        fail(failure);
                        return;
                    }
                    if (inlineClock != null) {
                        lastWriteNanos = inlineClock.getAsLong() - started;
                    }
                    acknowledge(step);
                    startNext();
                });
            } catch (RuntimeException e) {
                fail(e);
            }
            return;
        }
        diskLane.execute(() -> {
            if (runNow(step)) {
                startNext();
            }
        });
    }

    private void writeNextHere() {
        Write step = nextStep();
        if (step != null && runNow(step)) {
            startNext();
        }
    }

    /** Writes {@code step} on this thread and acknowledges it; false if it failed. */
    private boolean runNow(Write step) {
        long started = inlineClock == null ? 0 : inlineClock.getAsLong();
        try {
            switch (step.kind()) {
                case TRUNCATE_PREFIX -> storage.truncatePrefix(step.index());
                case RESET -> storage.reset(step.index());
                case APPEND -> {
                    if (step.index() >= 0) {
                        storage.truncateSuffix(step.index());
                    }
                    storage.append(step.entries());
                }
            }
        } catch (RuntimeException e) {
            fail(e);
            return false;
        }
        if (step.onDone() != null) {
            step.onDone().run();
        }
        if (step.kind() == Kind.APPEND && inlineClock != null) {
            lastWriteNanos = inlineClock.getAsLong() - started;
        }
        acknowledge(step);
        return true;
    }

    private void acknowledge(Write step) {
        if (failed || step.entries().isEmpty()) {
            return;
        }
        LogEntry last = step.entries().get(step.entries().size() - 1);
        listener.onWritten(last.getIndex(), last.getTerm(), step.generation());
    }

    /** Drops queued writes and writes nothing more (a simulated process death loses unsynced data). */
    void halt() {
        synchronized (queue) {
            failed = true;
            queue.clear();
        }
    }

    private void fail(RuntimeException e) {
        synchronized (queue) {
            if (failed) {
                return;
            }
            failed = true;
            queue.clear();
        }
        listener.onWriteFailed(e);
    }

}
