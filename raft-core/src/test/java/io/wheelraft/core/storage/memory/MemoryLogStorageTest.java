package io.wheelraft.core.storage.memory;

import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryLogStorageTest {

    private final MemoryLogStorage log = new MemoryLogStorage();

    static LogEntry data(long index, long term) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA).build();
    }

    static LogEntry config(long index, long term, String... peers) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(List.of(peers))).build();
    }

    static List<LogEntry> range(long from, long to, long term) {
        List<LogEntry> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(data(i, term));
        }
        return out;
    }

    @Test
    void freshLogIsEmptyStartingAtOne() {
        assertEquals(1, log.firstLogIndex());
        assertEquals(0, log.lastLogIndex());
        assertNull(log.entry(0));
        assertNull(log.entry(1));
        assertEquals(0, log.term(1));
        assertTrue(log.configurationEntries().isEmpty());
    }

    @Test
    void appendedEntriesAreReadBackByIndex() {
        log.append(range(1, 3, 1));
        log.append(range(4, 5, 2));
        assertEquals(1, log.firstLogIndex());
        assertEquals(5, log.lastLogIndex());
        for (long i = 1; i <= 5; i++) {
            assertEquals(i, log.entry(i).getIndex());
        }
        assertEquals(1, log.term(3));
        assertEquals(2, log.term(4));
        assertNull(log.entry(6));
        assertEquals(0, log.term(6));
        assertEquals(0, log.term(-1));
    }

    @Test
    void appendOfAnEmptyBatchChangesNothing() {
        log.append(List.of());
        assertEquals(0, log.lastLogIndex());
    }

    @Test
    void appendThatSkipsAnIndexIsRejectedNamingExpectedAndActual() {
        log.append(range(1, 2, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.append(range(4, 4, 1)));
        assertTrue(e.getMessage().contains("expected index 3"), e.getMessage());
        assertTrue(e.getMessage().contains("index 4"), e.getMessage());
        assertEquals(2, log.lastLogIndex());
    }

    @Test
    void appendThatOverlapsTheLogIsRejected() {
        log.append(range(1, 2, 1));
        assertThrows(IllegalArgumentException.class, () -> log.append(range(2, 3, 1)));
        assertEquals(2, log.lastLogIndex());
    }

    @Test
    void batchWithAGapInsideIsRejectedWhole() {
        List<LogEntry> batch = List.of(data(1, 1), data(2, 1), data(4, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.append(batch));
        assertTrue(e.getMessage().contains("expected index 3"), e.getMessage());
        assertEquals(0, log.lastLogIndex(), "nothing of a rejected batch is written");
    }

    @Test
    void nullBatchOrEntryIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> log.append(null));
        List<LogEntry> withNull = new ArrayList<>();
        withNull.add(null);
        assertThrows(IllegalArgumentException.class, () -> log.append(withNull));
    }

    @Test
    void truncatePrefixDropsEarlierEntriesAndKeepsIndexesStable() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(4);
        assertEquals(4, log.firstLogIndex());
        assertEquals(10, log.lastLogIndex());
        assertNull(log.entry(3));
        assertEquals(0, log.term(3));
        assertEquals(4, log.entry(4).getIndex());
        assertEquals(10, log.entry(10).getIndex());
        log.append(range(11, 11, 2));
        assertEquals(2, log.term(11));
    }

    @Test
    void truncatePrefixAtOrBeforeFirstIndexIsANoOp() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(3);
        log.truncatePrefix(3);
        log.truncatePrefix(1);
        log.truncatePrefix(-7);
        assertEquals(3, log.firstLogIndex());
        assertEquals(5, log.lastLogIndex());
    }

    @Test
    void truncatePrefixToLastIndexKeepsOnlyTheLastEntry() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(5);
        assertEquals(5, log.firstLogIndex());
        assertEquals(5, log.lastLogIndex());
        assertEquals(5, log.entry(5).getIndex());
    }

    @Test
    void truncatePrefixPastTheEndEmptiesTheLogWhichContinuesThere() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(9);
        assertEquals(9, log.firstLogIndex());
        assertEquals(8, log.lastLogIndex());
        assertNull(log.entry(5));
        assertThrows(IllegalArgumentException.class, () -> log.append(range(6, 6, 1)));
        log.append(range(9, 9, 3));
        assertEquals(3, log.term(9));
    }

    @Test
    void manyPrefixTruncationsCompactWithoutLosingEntries() {
        long next = 1;
        for (int round = 0; round < 50; round++) {
            log.append(range(next, next + 999, round + 1));
            next += 1000;
            log.truncatePrefix(next - 10);
            assertEquals(next - 10, log.firstLogIndex());
            for (long i = next - 10; i < next; i++) {
                assertEquals(i, log.entry(i).getIndex());
                assertEquals(round + 1, log.term(i));
            }
        }
    }

    @Test
    void truncateSuffixDropsLaterEntries() {
        log.append(range(1, 10, 1));
        log.truncateSuffix(6);
        assertEquals(6, log.lastLogIndex());
        assertNull(log.entry(7));
        log.append(range(7, 8, 2));
        assertEquals(2, log.term(7));
        assertEquals(1, log.term(6));
    }

    @Test
    void truncateSuffixAtOrPastLastIndexIsANoOp() {
        log.append(range(1, 5, 1));
        log.truncateSuffix(5);
        log.truncateSuffix(100);
        assertEquals(5, log.lastLogIndex());
    }

    @Test
    void truncateSuffixToJustBeforeFirstIndexEmptiesTheLog() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(5);
        log.truncateSuffix(4);
        assertEquals(5, log.firstLogIndex());
        assertEquals(4, log.lastLogIndex());
        log.append(range(5, 5, 2));
        assertEquals(2, log.term(5));
    }

    @Test
    void truncateSuffixIntoCompactedEntriesIsRejected() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(5);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.truncateSuffix(3));
        assertTrue(e.getMessage().contains("3") && e.getMessage().contains("5"), e.getMessage());
        assertEquals(10, log.lastLogIndex());
    }

    @Test
    void resetEmptiesTheLogAndAppendContinuesAtTheGivenIndex() {
        log.append(List.of(data(1, 1), config(2, 1, "a:1")));
        log.reset(100);
        assertEquals(100, log.firstLogIndex());
        assertEquals(99, log.lastLogIndex());
        assertNull(log.entry(1));
        assertTrue(log.configurationEntries().isEmpty());
        assertThrows(IllegalArgumentException.class, () -> log.append(range(1, 1, 1)));
        log.append(range(100, 101, 5));
        assertEquals(5, log.term(101));
        assertEquals(100, log.firstLogIndex());
    }

    @Test
    void resetToZeroIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.reset(0));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
    }

    @Test
    void configurationEntriesFollowTruncations() {
        log.append(List.of(config(1, 1, "a:1"), data(2, 1), config(3, 1, "a:1", "b:1"), data(4, 1), config(5, 2, "b:1")));
        assertEquals(List.of(1L, 3L, 5L), indexes(log.configurationEntries()));
        log.truncateSuffix(4);
        assertEquals(List.of(1L, 3L), indexes(log.configurationEntries()));
        log.truncatePrefix(2);
        assertEquals(List.of(3L), indexes(log.configurationEntries()));
        assertEquals(List.of("a:1", "b:1"), log.configurationEntries().get(0).getConfiguration().getPeersList());
    }

    @Test
    void injectedFailureFailsTheNextWriteOnlyAndChangesNothing() {
        log.append(range(1, 3, 1));
        StorageException disk = new StorageException("disk full");
        log.faults().failNextWrite(disk);
        assertSame(disk, assertThrows(StorageException.class, () -> log.append(range(4, 4, 1))));
        assertEquals(3, log.lastLogIndex());
        log.append(range(4, 4, 1));
        assertEquals(4, log.lastLogIndex());
    }

    @Test
    void stickyFailureFailsEveryWriteUntilCleared() {
        log.append(range(1, 5, 1));
        log.faults().failAllWrites(new LogCorruptionException("bad sector"));
        assertThrows(LogCorruptionException.class, () -> log.append(range(6, 6, 1)));
        assertThrows(LogCorruptionException.class, () -> log.truncatePrefix(2));
        assertThrows(LogCorruptionException.class, () -> log.truncateSuffix(2));
        assertThrows(LogCorruptionException.class, () -> log.reset(9));
        assertEquals(1, log.firstLogIndex());
        assertEquals(5, log.lastLogIndex());
        assertEquals(5, log.entry(5).getIndex(), "reads still work");
        log.faults().clear();
        log.append(range(6, 6, 1));
        assertEquals(6, log.lastLogIndex());
    }

    @Test
    void closedLogRefusesCallsUntilReopenedWithItsEntries() {
        log.append(range(1, 3, 1));
        log.close();
        log.close();
        assertThrows(StorageException.class, log::lastLogIndex);
        assertThrows(StorageException.class, () -> log.entry(1));
        assertThrows(StorageException.class, () -> log.append(range(4, 4, 1)));
        log.reopen();
        assertEquals(3, log.lastLogIndex());
    }

    @Test
    void concurrentReadersSeeAContiguousLogWhileTheWriterAppendsAndTruncates() throws Exception {
        int readers = 3;
        AtomicBoolean done = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(readers);
        // The writer starts once every reader has read once: on a loaded machine it could
        // otherwise finish before a reader thread got a turn, and that reader would prove nothing.
        CountDownLatch firstReads = new CountDownLatch(readers);
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                results.add(pool.submit(() -> {
                    started.countDown();
                    long reads = 0;
                    while (!done.get()) {
                        long first = log.firstLogIndex();
                        long last = log.lastLogIndex();
                        if (last < first - 1) {
                            throw new AssertionError("last " + last + " below first " + first + " - 1");
                        }
                        // Gone only if the prefix was truncated past it meanwhile; otherwise the entry of that index.
                        LogEntry e = log.entry(last);
                        if (last >= 1 && e == null && log.firstLogIndex() <= last) {
                            throw new AssertionError("entry " + last + " missing while first index is " + log.firstLogIndex());
                        }
                        if (e != null && (e.getIndex() != last || e.getTerm() != last)) {
                            throw new AssertionError("entry at " + last + " read as " + e);
                        }
                        if (++reads == 1) {
                            firstReads.countDown();
                        }
                    }
                    return reads;
                }));
            }
            assertTrue(started.await(10, TimeUnit.SECONDS));
            assertTrue(firstReads.await(10, TimeUnit.SECONDS));
            for (long i = 1; i <= 20_000; i += 10) {
                List<LogEntry> batch = new ArrayList<>();
                for (long j = i; j < i + 10; j++) {
                    batch.add(data(j, j));
                }
                log.append(batch);
                if (i % 1000 == 1) {
                    log.truncatePrefix(i - 500);
                }
            }
            done.set(true);
            for (Future<Long> f : results) {
                assertTrue(f.get(10, TimeUnit.SECONDS) > 0);
            }
        } finally {
            done.set(true);
            pool.shutdownNow();
        }
        assertEquals(20_000, log.lastLogIndex());
    }

    private static List<Long> indexes(List<LogEntry> entries) {
        return entries.stream().map(LogEntry::getIndex).toList();
    }
}
