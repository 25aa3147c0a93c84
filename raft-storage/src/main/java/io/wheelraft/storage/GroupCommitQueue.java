package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Makes the writes of many groups durable together: log appends and term and vote changes, each
 * handed over as a {@link Job}, are written by one thread as one {@link WriteBatch} with one WAL
 * sync for everything queued since its last write.
 *
 * <p>Why one thread per store: a process hosting thousands of groups has, under spread load or at a
 * start or a failover, hundreds of groups writing at once. Written by each group's own disk task,
 * every write is a RocksDB writer of its own: RocksDB merges concurrent writers into one WAL write,
 * but each of them blocks on a futex and is woken again, which on a virtualised machine cost more
 * than the write (about one futex call per write, and most of the servers' CPU). Here a write is
 * one queue insertion, and the thread wakes once per batch.
 *
 * <p>Callbacks run on a second thread, handed over once per batch, not on the writing one: a
 * callback may then go on with its group's work (a node's Raft step), even wait for a term and
 * vote write, while the next batch is written. Only callbacks that merely hand over
 * ({@link Job#doneOnWriter}) run on the writing thread, first. A job whose {@link Job#fill} throws fails alone (its part of the batch is rolled back);
 * a write that fails fails every job in it (the store reports the failure to every group as for any
 * write). Thread-safe; both threads are daemons started with the queue.
 */
final class GroupCommitQueue implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitQueue.class);
    /** Jobs written together at most: bounds one write's size. */
    static final int MAX_BATCH = 4096;

    /** One group's write. */
    interface Job {
        /** Adds this job's changes to the shared batch (on the writing thread). */
        void fill(WriteBatch batch, RocksDbStore store) throws RocksDBException;

        /** Whether the write must be synced even when the store's writes are not. */
        boolean forceSync();

        /** Told null once the job is durable, or why it is not (on the callback thread, or see {@link #doneOnWriter}). */
        void done(RuntimeException failure);

        /**
         * Whether {@link #done} only hands over and never waits or runs its group's work, so the
         * writing thread may call it at once. Such callbacks are what a callback on the other
         * thread may be waiting for (a Raft step waiting for its term and vote write).
         */
        default boolean doneOnWriter() {
            return false;
        }
    }

    /** A finished job and what became of it. */
    private record Outcome(Job job, RuntimeException failure) {
    }

    private static final Job STOP = new Job() {
        @Override
        public void fill(WriteBatch batch, RocksDbStore store) {
        }

        @Override
        public boolean forceSync() {
            return false;
        }

        @Override
        public void done(RuntimeException failure) {
        }
    };

    private final RocksDbStore store;
    private final LinkedBlockingQueue<Job> queue = new LinkedBlockingQueue<>();
    /** Batches of outcomes for the callback thread; an empty list stops it. */
    private final LinkedBlockingQueue<List<Outcome>> outcomes = new LinkedBlockingQueue<>();
    private final Thread writer;
    private final Thread callbacks;
    private volatile boolean closed;
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong jobs = new AtomicLong();

    GroupCommitQueue(RocksDbStore store) {
        this.store = store;
        this.writer = daemon(this::writeLoop, "wheelraft-group-commit");
        this.callbacks = daemon(this::callbackLoop, "wheelraft-group-commit-done");
    }

    private static Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Queues {@code job}; it is told the outcome on the callback thread (or here, if the queue is closed). */
    void submit(Job job) {
        if (closed) {
            job.done(closedFailure());
            return;
        }
        queue.add(job);
        if (closed && queue.remove(job)) {
            job.done(closedFailure()); // closed meanwhile, and the writer will not see it
        }
    }

    private StorageException closedFailure() {
        return new StorageException("the RocksDB store in " + store.directory() + " is closed");
    }

    private void writeLoop() {
        List<Job> batch = new ArrayList<>();
        try {
            while (true) {
                Job first;
                try {
                    first = queue.take();
                } catch (InterruptedException e) {
                    return;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                boolean stop = batch.remove(STOP);
                if (!batch.isEmpty()) {
                    List<Outcome> done = write(batch);
                    List<Outcome> later = new ArrayList<>(done.size());
                    for (Outcome o : done) {
                        if (o.job().doneOnWriter()) {
                            tell(o);
                        } else {
                            later.add(o);
                        }
                    }
                    if (!later.isEmpty()) {
                        outcomes.add(later);
                    }
                }
                batch.clear();
                if (stop) {
                    return;
                }
            }
        } finally {
            outcomes.add(List.of());
        }
    }

    private List<Outcome> write(List<Job> batch) {
        List<Outcome> out = new ArrayList<>(batch.size());
        List<Job> written = new ArrayList<>(batch.size());
        boolean sync = false;
        try (WriteBatch wb = new WriteBatch()) {
            for (Job job : batch) {
                try {
                    wb.setSavePoint();
                    job.fill(wb, store);
                    written.add(job);
                    sync |= job.forceSync();
                } catch (RocksDBException | RuntimeException e) {
                    rollBack(wb);
                    out.add(new Outcome(job, e instanceof RuntimeException r ? r
                            : new StorageException("preparing a write to " + store.directory() + " failed: " + e.getMessage(), e)));
                }
            }
            RuntimeException failure = null;
            if (!written.isEmpty()) {
                try {
                    store.write(wb, sync);
                    writes.incrementAndGet();
                    jobs.addAndGet(written.size());
                } catch (RocksDBException e) {
                    failure = new StorageException("a write of " + written.size() + " groups' changes to " + store.directory()
                            + " failed: " + e.getMessage(), e);
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            for (Job job : written) {
                out.add(new Outcome(job, failure));
            }
        }
        return out;
    }

    private static void rollBack(WriteBatch wb) {
        try {
            wb.rollbackToSavePoint();
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot roll back a failed job's part of a write batch", e);
        }
    }

    private void callbackLoop() {
        while (true) {
            List<Outcome> done;
            try {
                done = outcomes.take();
            } catch (InterruptedException e) {
                return;
            }
            if (done.isEmpty()) {
                return;
            }
            for (Outcome o : done) {
                tell(o);
            }
        }
    }

    private static void tell(Outcome o) {
        try {
            o.job().done(o.failure());
        } catch (RuntimeException e) {
            LOG.error("a write callback failed", e);
        }
    }

    /** Writes made so far (each holding one or more jobs). */
    long writes() {
        return writes.get();
    }

    /** Jobs made durable so far. */
    long jobs() {
        return jobs.get();
    }

    /**
     * Writes what is queued and runs its callbacks, then stops both threads (waiting at most
     * {@code boundMs} for each); jobs still queued after that fail. Idempotent.
     */
    void close(long boundMs) {
        if (closed) {
            return;
        }
        closed = true;
        queue.add(STOP);
        join(writer, boundMs);
        if (Thread.currentThread() != callbacks) {
            join(callbacks, boundMs); // a callback closing the store must not wait for itself
        }
        Job left;
        while ((left = queue.poll()) != null) {
            if (left != STOP) {
                left.done(closedFailure());
            }
        }
    }

    private static void join(Thread t, long boundMs) {
        try {
            t.join(boundMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        close(RocksDbStore.CLOSE_AFTER_FAILURE_MS);
    }
}
