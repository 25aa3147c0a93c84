package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Synced puts of many groups (their terms and votes), written as one RocksDB batch and one WAL
 * sync for everything queued while the previous one was written. A process hosting thousands of
 * groups elects them all at start: each synced put on the group's own Raft thread would hold that
 * thread for a sync and queue its other groups behind it (their heartbeats too, so leaders lose
 * their quorum and elections repeat); here at most one caller writes at a time, the others only
 * queue, and each sync covers every write that arrived during the one before.
 *
 * <p>A put that finds nothing written or queued is written at once by its caller (one sync, no
 * hand-off); one that finds a write under way is queued for the thread. One batch is written at a
 * time, in the order the puts came, so two puts of one key land in that order. Each put's future
 * completes once the batch holding it is durable, or fails with a {@link StorageException} if the
 * batch could not be written. The thread starts with the first put that is queued and ends at
 * {@link #close}, which writes what is queued first; a put after that fails at once. Thread-safe.
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

    private final String name;
    private final SyncedWriter writer;
    /** Puts waiting for the thread; guarded by this. */
    private final ArrayDeque<Put> queue = new ArrayDeque<>();
    private Thread thread;
    private boolean closed;
    /** A batch is being written, by the thread or by a caller writing its own put; guarded by this. */
    private boolean writing;

    /** @param name names the thread and the store in messages */
    SyncedPutBatcher(String name, SyncedWriter writer) {
        this.name = name;
        this.writer = writer;
    }

    /**
     * One synced put into {@code cf} (null: the default column family); the future completes when
     * it is durable. If nothing is being written or queued, the caller writes it at once itself
     * and gets a completed future, as RocksDB's first writer in line does: a process with a few
     * groups pays no hand-off to another thread on its elections. Otherwise it is queued for the
     * next batch. One batch is written at a time, in the order the puts came, so puts of the same
     * key land in that order.
     */
    CompletableFuture<Void> put(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Put put = new Put(cf, key, value, done);
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new StorageException("the store " + name + " is closed"));
            }
            if (writing || !queue.isEmpty()) {
                if (thread == null) {
                    thread = new Thread(this::run, "wheelraft-meta-sync");
                    thread.setDaemon(true);
                    thread.start();
                }
                queue.add(put);
                notifyAll();
                return done;
            }
            writing = true;
        }
        writeThenRelease(List.of(put));
        return done;
    }

    private void run() {
        List<Put> batch = new ArrayList<>();
        while (true) {
            synchronized (this) {
                try {
                    while (writing || (queue.isEmpty() && !closed)) {
                        wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    StorageException stopped = new StorageException("the synced-write thread of the store " + name + " was interrupted");
                    queue.forEach(p -> p.done().completeExceptionally(stopped));
                    queue.clear();
                    return;
                }
                if (queue.isEmpty()) {
                    return; // closed, and everything queued is written
                }
                while (!queue.isEmpty() && batch.size() < MAX_BATCH) {
                    batch.add(queue.poll());
                }
                writing = true;
            }
            writeThenRelease(batch);
            batch.clear();
        }
    }

    /** Writes {@code puts} (this caller holds {@link #writing}), then lets the next batch go. */
    private void writeThenRelease(List<Put> puts) {
        try {
            write(puts);
        } finally {
            synchronized (this) {
                writing = false;
                notifyAll();
            }
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
            notifyAll();
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
