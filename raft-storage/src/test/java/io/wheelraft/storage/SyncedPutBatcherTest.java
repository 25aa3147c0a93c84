package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;
import org.rocksdb.RocksDBException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Puts queued while a synced batch is being written go out together in the next batch; each
 * put completes only when its batch was written, and fails when its batch failed.
 */
class SyncedPutBatcherTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void anIdleBatcherHasTheCallerWriteItsPutAtOnce() {
        List<Thread> writers = new ArrayList<>();
        SyncedPutBatcher batcher = new SyncedPutBatcher("test", batch -> writers.add(Thread.currentThread()));
        try {
            CompletableFuture<Void> put = batcher.put(null, bytes("k"), bytes("v"));
            assertTrue(put.isDone() && !put.isCompletedExceptionally(), "an idle batcher did not write at once");
            assertEquals(List.of(Thread.currentThread()), writers, "written by another thread");
        } finally {
            batcher.close();
        }
    }

    /**
     * While one write is under way, puts queue; they are written after it, together (at most one
     * batch more while the thread's first batch is also under way), and none completes earlier.
     */
    @Test
    void putsQueuedDuringASyncShareTheNextBatch() throws Exception {
        CountDownLatch firstWriteStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> batchSizes = new ArrayList<>();
        SyncedPutBatcher batcher = new SyncedPutBatcher("test", batch -> {
            synchronized (batchSizes) {
                batchSizes.add(batch.count());
            }
            firstWriteStarted.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try {
            Future<CompletableFuture<Void>> first = caller.submit(() -> batcher.put(null, bytes("k0"), bytes("v"))); // writes itself
            assertTrue(firstWriteStarted.await(10, TimeUnit.SECONDS));
            List<CompletableFuture<Void>> queued = new ArrayList<>();
            for (int i = 1; i <= 100; i++) {
                queued.add(batcher.put(null, bytes("k" + i), bytes("v")));
            }
            assertTrue(queued.stream().noneMatch(CompletableFuture::isDone), "completed before its batch was written");
            release.countDown();
            CompletableFuture.allOf(queued.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            assertTrue(first.get(10, TimeUnit.SECONDS).isDone());
            synchronized (batchSizes) {
                assertEquals(1, batchSizes.get(0), "the caller's own write");
                assertEquals(100, batchSizes.stream().skip(1).mapToInt(Integer::intValue).sum());
                assertTrue(batchSizes.size() <= 2, "the 100 puts queued during one write were not written as one batch: " + batchSizes);
            }
        } finally {
            release.countDown();
            caller.shutdownNow();
            batcher.close();
        }
    }

    @Test
    void aFailedBatchFailsEachOfItsPutsNamingTheStore() {
        SyncedPutBatcher batcher = new SyncedPutBatcher("/data/n1", batch -> {
            throw new RocksDBException("IO error: No space left on device");
        });
        try {
            CompletableFuture<Void> put = batcher.put(null, bytes("k"), bytes("v"));
            CompletionException e = assertThrows(CompletionException.class, put::join);
            StorageException cause = assertInstanceOf(StorageException.class, e.getCause());
            assertTrue(cause.getMessage().contains("/data/n1") && cause.getMessage().contains("No space left"), cause.getMessage());
        } finally {
            batcher.close();
        }
    }

    @Test
    void closeWritesWhatIsQueuedAndLaterPutsFail() {
        List<Integer> batchSizes = new ArrayList<>();
        SyncedPutBatcher batcher = new SyncedPutBatcher("test", batch -> {
            synchronized (batchSizes) {
                batchSizes.add(batch.count());
            }
        });
        List<CompletableFuture<Void>> puts = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            puts.add(batcher.put(null, bytes("k" + i), bytes("v")));
        }
        batcher.close();
        assertTrue(puts.stream().allMatch(p -> p.isDone() && !p.isCompletedExceptionally()), "a queued put was not written at close");
        synchronized (batchSizes) {
            assertEquals(50, batchSizes.stream().mapToInt(Integer::intValue).sum());
        }
        CompletionException e = assertThrows(CompletionException.class, () -> batcher.put(null, bytes("k"), bytes("v")).join());
        assertInstanceOf(StorageException.class, e.getCause());
    }
}
