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
    void putsQueuedDuringASyncShareTheNextBatch() throws Exception {
        CountDownLatch firstWriteStarted = new CountDownLatch(1);
        CountDownLatch releaseFirstWrite = new CountDownLatch(1);
        List<Integer> batchSizes = new ArrayList<>();
        SyncedPutBatcher batcher = new SyncedPutBatcher("test", batch -> {
            synchronized (batchSizes) {
                batchSizes.add(batch.count());
            }
            firstWriteStarted.countDown();
            try {
                releaseFirstWrite.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            CompletableFuture<Void> first = batcher.put(null, bytes("k0"), bytes("v"));
            assertTrue(firstWriteStarted.await(10, TimeUnit.SECONDS));
            List<CompletableFuture<Void>> queued = new ArrayList<>();
            for (int i = 1; i <= 100; i++) {
                queued.add(batcher.put(null, bytes("k" + i), bytes("v")));
            }
            assertFalse(first.isDone(), "completed before its batch was written");
            assertTrue(queued.stream().noneMatch(CompletableFuture::isDone));
            releaseFirstWrite.countDown();
            CompletableFuture.allOf(queued.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            assertTrue(first.isDone());
            synchronized (batchSizes) {
                assertEquals(List.of(1, 100), batchSizes, "the 100 puts queued during the first sync were not written as one batch");
            }
        } finally {
            releaseFirstWrite.countDown();
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
