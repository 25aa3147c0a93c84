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
import java.util.function.Consumer;

/**
 * Writes the term and vote changes of many groups in one synced RocksDB write. When a process
 * hosting thousands of groups starts or loses a peer, nearly every group changes its term at
 * once; written one synced put at a time, each change would hold a Raft thread for a WAL sync, so
 * a few threads would turn thousands of changes into thousands of sequential syncs. Here the
 * groups hand their puts to one thread, which writes everything queued since its last write as one
 * {@link WriteBatch} with one sync, and tells each group when its put is durable.
 *
 * <p>One daemon thread per store, started on first use. A write that fails fails every put in it
 * (the store reports the failure to every group's listener as for any write). Thread-safe.
 */
final class MetaSyncQueue implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MetaSyncQueue.class);
    /** Puts written together at most: bounds one write's size (a few hundred KiB). */
    static final int MAX_BATCH = 4096;

    /** One group's put; {@code done} gets null once it is durable, or the failure. */
    record Put(byte[] key, byte[] value, Consumer<RuntimeException> done) {
    }

    private static final Put STOP = new Put(null, null, e -> { });

    private final RocksDbStore store;
    private final LinkedBlockingQueue<Put> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong puts = new AtomicLong();

    MetaSyncQueue(RocksDbStore store) {
        this.store = store;
        this.thread = new Thread(this::run, "wheelraft-meta-sync");
        thread.setDaemon(true);
        thread.start();
    }

    /** Queues {@code put}; its callback runs on this queue's thread (or here, if the queue is closed). */
    void submit(Put put) {
        if (closed) {
            put.done().accept(closedFailure());
            return;
        }
        queue.add(put);
        if (closed && queue.remove(put)) {
            put.done().accept(closedFailure()); // closed meanwhile, and the thread will not see it
        }
    }

    private StorageException closedFailure() {
        return new StorageException("the RocksDB store in " + store.directory() + " is closed");
    }

    private void run() {
        List<Put> batch = new ArrayList<>();
        while (true) {
            Put first;
            try {
                first = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (first == STOP) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, MAX_BATCH - 1);
            boolean stop = batch.remove(STOP);
            write(batch);
            batch.clear();
            if (stop) {
                return;
            }
        }
    }

    private void write(List<Put> batch) {
        RuntimeException failure = null;
        try (WriteBatch wb = new WriteBatch()) {
            for (Put p : batch) {
                wb.put(store.metaFamily(), p.key(), p.value());
            }
            store.write(wb, true);
            writes.incrementAndGet();
            puts.addAndGet(batch.size());
        } catch (RocksDBException e) {
            failure = new StorageException("a synced write of " + batch.size() + " groups' term and vote to " + store.directory()
                    + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Put p : batch) {
            try {
                p.done().accept(failure);
            } catch (RuntimeException e) {
                LOG.error("a term and vote write callback failed", e);
            }
        }
    }

    /** Synced writes made so far (each holding one or more puts). */
    long writes() {
        return writes.get();
    }

    /** Puts made durable so far. */
    long puts() {
        return puts.get();
    }

    /**
     * Writes what is queued, then stops the thread (waiting at most {@code boundMs}); puts still
     * queued after that fail. Idempotent.
     */
    void close(long boundMs) {
        if (closed) {
            return;
        }
        closed = true;
        queue.add(STOP);
        try {
            thread.join(boundMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Put left;
        while ((left = queue.poll()) != null) {
            if (left != STOP) {
                left.done().accept(closedFailure());
            }
        }
    }

    @Override
    public void close() {
        close(RocksDbStore.CLOSE_AFTER_FAILURE_MS);
    }
}
