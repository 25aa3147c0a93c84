package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;

/**
 * Writes a node's log on its disk lane, off the Raft lane. Writes queued while the disk was busy
 * are merged into one {@link LogStorage#append} (group commit: one fsync for many batches);
 * a write that truncates first starts a new group. Each finished group is acknowledged with its
 * last index and term; a failure is reported and nothing after it is written.
 */
final class LogWriter {

    /** Acknowledgement of a durable write. */
    interface Listener {
        void onWritten(long lastIndex, long lastTerm);

        void onWriteFailed(RuntimeException error);
    }

    private record Write(long truncateAfter, List<LogEntry> entries) {
    }

    private final LogStorage storage;
    private final SerialLane diskLane;
    private final Listener listener;
    private final Queue<Write> queue = new ConcurrentLinkedQueue<>();
    private volatile boolean failed;

    LogWriter(String name, LogStorage storage, Executor diskPool, Listener listener) {
        this.storage = storage;
        this.diskLane = new SerialLane(name + "-disk", diskPool);
        this.listener = listener;
    }

    /** Queues a write; called from the Raft lane. */
    void submit(long truncateAfter, List<LogEntry> entries) {
        queue.add(new Write(truncateAfter, entries));
        diskLane.execute(this::flush);
    }

    private void flush() {
        List<LogEntry> group = new ArrayList<>();
        Write w;
        while (!failed && (w = queue.peek()) != null) {
            if (w.truncateAfter() >= 0 && !group.isEmpty()) {
                break; // the truncation must not be merged behind entries it would remove
            }
            queue.poll();
            try {
                if (w.truncateAfter() >= 0) {
                    storage.truncateSuffix(w.truncateAfter());
                }
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            group.addAll(w.entries());
        }
        if (group.isEmpty()) {
            return;
        }
        try {
            storage.append(group);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        LogEntry last = group.get(group.size() - 1);
        listener.onWritten(last.getIndex(), last.getTerm());
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
