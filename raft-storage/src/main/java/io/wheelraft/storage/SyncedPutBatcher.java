package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Synced puts of many groups (their terms and votes), written by one thread of the store as one
 * RocksDB batch and one WAL sync for everything queued meanwhile. A process hosting thousands of
 * groups elects them all at start: each synced put on the group's own Raft thread would hold that
 * thread for a sync and queue its other groups behind it (their heartbeats too, so leaders lose
 * their quorum and elections repeat); here callers only queue, and each sync covers every write
 * that arrived during the one before.
 *
 * <p>Each put's future completes once the batch holding it is durable, or fails with a
 * {@link StorageException} if the batch could not be written; puts complete in the order they
 * were queued. The thread starts with the first put and ends at {@link #close}, which writes what
 * is queued first; a put after that fails at once. Thread-safe.
 */
final class SyncedPutBatcher implements AutoCloseable {

    /** Writes one batch, synced, or throws. */
    interface SyncedWriter {
        void write(WriteBatch batch) throws RocksDBException;
    }

    private record Put(ColumnFamilyHandle cf, byte[] key, byte[] value, CompletableFuture<Void> done) {
    }

    /** Most puts in one batch: bounds the native batch a burst of elections builds. */
    static final int MAX_BATCH = 4096;
    private static final Put END = new Put(null, null, null, null);

    private final String name;
    private final SyncedWriter writer;
    private final LinkedBlockingQueue<Put> queue = new LinkedBlockingQueue<>();
    private Thread thread;
    private boolean closed;

    /** @param name names the thread and the store in messages */
    SyncedPutBatcher(String name, SyncedWriter writer) {
        this.name = name;
        this.writer = writer;
    }

    /** Queues one synced put into {@code cf} (null: the default column family); the future completes when it is durable. */
    CompletableFuture<Void> put(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new StorageException("the store " + name + " is closed"));
            }
            if (thread == null) {
                thread = new Thread(this::run, "wheelraft-meta-sync");
                thread.setDaemon(true);
                thread.start();
            }
            queue.add(new Put(cf, key, value, done));
        }
        return done;
    }

    private void run() {
        List<Put> batch = new ArrayList<>();
        boolean end = false;
        while (!end) {
            try {
                batch.add(queue.take());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                StorageException stopped = new StorageException("the synced-write thread of the store " + name + " was interrupted");
                queue.forEach(p -> {
                    if (p != END) {
                        p.done().completeExceptionally(stopped);
                    }
                });
                return;
            }
            queue.drainTo(batch, MAX_BATCH - 1);
            end = batch.remove(END); // only close() queues it, after the last put
            write(batch);
            batch.clear();
        }
    }

    private void write(List<Put> puts) {
        if (puts.isEmpty()) {
            return;
        }
        try (WriteBatch batch = new WriteBatch()) {
            for (Put p : puts) {
                if (p.cf() == null) {
                    batch.put(p.key(), p.value());
                } else {
                    batch.put(p.cf(), p.key(), p.value());
                }
            }
            writer.write(batch);
        } catch (RocksDBException | RuntimeException e) {
            StorageException failure = new StorageException("synced write of " + puts.size() + " term/vote records to the store "
                    + name + " failed: " + e.getMessage(), e);
            puts.forEach(p -> p.done().completeExceptionally(failure));
            return;
        }
        puts.forEach(p -> p.done().complete(null));
    }

    /** Writes what is queued, then stops the thread. Idempotent. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            if (t != null) {
                queue.add(END);
            }
        }
        if (t != null) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
