package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.WriteBatch;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store's {@link GroupCommitQueue}: what queues while a write is under way goes into the next
 * one together, a job that cannot be prepared fails alone, callbacks run off the writing thread
 * (so one may wait for a later write), and closing fails what was never written. The writer is
 * held on a latch inside a job, so which jobs share a write is decided by the test, not by timing.
 */
class GroupCommitQueueTest {

    private static final long WAIT_SECONDS = 30;

    @TempDir
    Path dir;
    private RocksDbStore store;

    @BeforeEach
    void open() {
        store = RocksDbStore.open(dir.resolve("db"), RocksDbStoreOptions.defaults().withPresizedWalBytes(0));
    }

    @AfterEach
    void close() {
        store.close();
    }

    /** A job putting one key in the meta family; {@code outcome} gets its failure (or null) and the thread that told it. */
    private static class PutJob implements GroupCommitQueue.Job {
        final String key;
        final CompletableFuture<RuntimeException> outcome = new CompletableFuture<>();
        volatile Thread toldOn;
        volatile Thread filledOn;
        final CountDownLatch holdFill;

        PutJob(String key) {
            this(key, null);
        }

        PutJob(String key, CountDownLatch holdFill) {
            this.key = key;
            this.holdFill = holdFill;
        }

        @Override
        public void fill(WriteBatch batch, RocksDbStore s) throws org.rocksdb.RocksDBException {
            filledOn = Thread.currentThread();
            if (holdFill != null) {
                try {
                    holdFill.await(WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            batch.put(s.metaFamily(), key.getBytes(StandardCharsets.UTF_8), new byte[] {1});
        }

        @Override
        public boolean forceSync() {
            return true;
        }

        @Override
        public void done(RuntimeException failure) {
            toldOn = Thread.currentThread();
            outcome.complete(failure);
        }

        RuntimeException await() throws Exception {
            return outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    @Test
    void everythingQueuedWhileAWriteIsUnderWayGoesIntoTheNextWriteTogether() throws Exception {
        GroupCommitQueue queue = store.groupCommitQueue();
        CountDownLatch release = new CountDownLatch(1);
        PutJob holder = holdWriter(queue, release);
        List<PutJob> waiting = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            PutJob job = new PutJob("g" + i);
            waiting.add(job);
            queue.submit(job);
        }
        release.countDown();
        assertNull(holder.await());
        for (PutJob job : waiting) {
            assertNull(job.await(), "job " + job.key);
        }
        assertEquals(2, queue.writes(), "the holder's write, then one write for the 200 queued behind it");
        assertEquals(201, queue.jobs());
    }

    @Test
    void aJobThatCannotBePreparedFailsAloneAndTheOthersOfItsWriteSucceed() throws Exception {
        GroupCommitQueue queue = store.groupCommitQueue();
        CountDownLatch release = new CountDownLatch(1);
        holdWriter(queue, release);
        PutJob before = new PutJob("before");
        PutJob broken = new PutJob("broken") {
            @Override
            public void fill(WriteBatch batch, RocksDbStore s) throws org.rocksdb.RocksDBException {
                batch.put(s.metaFamily(), "half-written".getBytes(StandardCharsets.UTF_8), new byte[] {2});
                throw new IllegalStateException("cannot encode entry 7");
            }
        };
        PutJob after = new PutJob("after");
        queue.submit(before);
        queue.submit(broken);
        queue.submit(after);
        release.countDown();
        assertNull(before.await());
        assertNull(after.await());
        RuntimeException failure = broken.await();
        assertInstanceOf(IllegalStateException.class, failure);
        assertTrue(failure.getMessage().contains("entry 7"), failure.getMessage());
        assertEquals(2, queue.writes(), "the broken job's neighbours were still written together");
        byte[] half = store.get(store.metaFamily(), "half-written".getBytes(StandardCharsets.UTF_8));
        assertNull(half, "the broken job's partial changes were rolled back");
        byte[] kept = store.get(store.metaFamily(), "after".getBytes(StandardCharsets.UTF_8));
        assertTrue(kept != null && kept[0] == 1, "the job after the broken one was written");
    }

    @Test
    void aCallbackRunsOffTheWritingThreadAndMayWaitForALaterWrite() throws Exception {
        GroupCommitQueue queue = store.groupCommitQueue();
        CompletableFuture<RuntimeException> laterOutcome = new CompletableFuture<>();
        CompletableFuture<Boolean> waitedInCallback = new CompletableFuture<>();
        PutJob first = new PutJob("first") {
            @Override
            public void done(RuntimeException failure) {
                super.done(failure);
                // As a Raft step on this thread waiting for its term and vote write would.
                PutJob later = new PutJob("later") {
                    @Override
                    public boolean doneOnWriter() {
                        return true;
                    }
                };
                queue.submit(later);
                try {
                    laterOutcome.complete(later.await());
                    waitedInCallback.complete(true);
                } catch (Exception e) {
                    waitedInCallback.complete(false);
                }
            }
        };
        queue.submit(first);
        assertNull(first.await());
        assertTrue(waitedInCallback.get(WAIT_SECONDS * 2, TimeUnit.SECONDS), "the callback's wait for a later write ended");
        assertNull(laterOutcome.get());
        assertNotEquals(first.filledOn, first.toldOn, "the callback ran on the writing thread");
    }

    @Test
    void closingFailsWhatComesAfterWithAStorageExceptionNamingTheStore() throws Exception {
        GroupCommitQueue queue = store.groupCommitQueue();
        PutJob written = new PutJob("written");
        queue.submit(written);
        assertNull(written.await());
        queue.close();
        PutJob late = new PutJob("late");
        queue.submit(late);
        RuntimeException failure = late.await();
        assertInstanceOf(StorageException.class, failure);
        assertTrue(failure.getMessage().contains("closed") && failure.getMessage().contains(dir.resolve("db").toString()),
                failure.getMessage());
    }

    @Test
    void manyGroupsAppendingAtOnceShareWritesAndEachLogHoldsItsOwnEntries() throws Exception {
        int groups = 300;
        List<RocksDbLogStorage> logs = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            logs.add(store.logStorage("g" + g));
        }
        GroupCommitQueue queue = store.groupCommitQueue();
        CountDownLatch release = new CountDownLatch(1);
        holdWriter(queue, release);
        List<CompletableFuture<RuntimeException>> outcomes = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            CompletableFuture<RuntimeException> outcome = new CompletableFuture<>();
            outcomes.add(outcome);
            logs.get(g).appendAsync(-1, List.of(entry(1, g), entry(2, g)), outcome::complete);
            assertEquals(0, logs.get(g).lastLogIndex(), "entries readable before they are durable");
        }
        release.countDown();
        for (CompletableFuture<RuntimeException> outcome : outcomes) {
            assertNull(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        assertEquals(2, queue.writes(), "300 groups' appends after the holder's write took one write");
        for (int g = 0; g < groups; g++) {
            assertEquals(2, logs.get(g).lastLogIndex());
            assertEquals(entry(2, g), logs.get(g).entry(2));
        }
    }

    @Test
    void anAppendQueuedBeforeItsLogClosedIsNotWrittenAndSaysWhy() throws Exception {
        RocksDbLogStorage log = store.logStorage("closing");
        GroupCommitQueue queue = store.groupCommitQueue();
        CountDownLatch release = new CountDownLatch(1);
        holdWriter(queue, release);
        CompletableFuture<RuntimeException> outcome = new CompletableFuture<>();
        log.appendAsync(-1, List.of(entry(1, 0)), outcome::complete);
        log.close(); // the group stops while its append waits
        release.countDown();
        RuntimeException failure = outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertInstanceOf(StorageException.class, failure);
        assertTrue(failure.getMessage().contains("closed"), failure.getMessage());
        RocksDbLogStorage reopened = store.logStorage("closing");
        assertEquals(0, reopened.lastLogIndex(), "the late append landed behind the reopened log's back");
        assertNull(reopened.entry(1));
    }

    /** Submits a job whose preparation waits for {@code release}, and returns once the writer is inside it. */
    private static PutJob holdWriter(GroupCommitQueue queue, CountDownLatch release) {
        PutJob holder = new PutJob("holder", release);
        queue.submit(holder);
        awaitFilling(holder);
        return holder;
    }

    private static void awaitFilling(PutJob job) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (job.filledOn == null) {
            assertTrue(System.nanoTime() < deadline, "the writer never took job " + job.key);
            Thread.onSpinWait();
        }
    }

    private static LogEntry entry(long index, int group) {
        return LogEntry.newBuilder().setIndex(index).setTerm(1).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(com.google.protobuf.ByteString.copyFromUtf8("group " + group + " entry " + index)).build();
    }
}
