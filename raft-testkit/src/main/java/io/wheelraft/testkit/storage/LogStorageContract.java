package io.wheelraft.testkit.storage;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every {@link LogStorage} must do, as its Javadoc states it: extend this class, give a
 * fresh log in {@link #newLog()} and a restart on the same data in {@link #restart}, and JUnit 5
 * runs every check against your implementation. WheelRaft runs it against its in-memory, simulated
 * and RocksDB logs; implementation-specific behaviour (fault injection, corruption detection,
 * sharing one store between groups) stays in each implementation's own tests.
 *
 * <p>Threading: JUnit runs each test on one thread; one test also reads from three more threads
 * while it writes, as the SPI allows.
 */
public abstract class LogStorageContract {

    private LogStorage log;

    /** A fresh, empty log, used by one test only. */
    protected abstract LogStorage newLog() throws Exception;

    /**
     * Closes {@code log} and opens the same log again, as a process restarting on the same disk
     * would, and returns the reopened log. Every write that returned before must be there.
     */
    protected abstract LogStorage restart(LogStorage log) throws Exception;

    /** Releases the log after a test (and whatever holds it, e.g. a shared store). */
    protected void release(LogStorage log) throws Exception {
        log.close();
    }

    @BeforeEach
    final void openLog() throws Exception {
        log = newLog();
    }

    @AfterEach
    final void releaseLog() throws Exception {
        if (log != null) {
            release(log);
        }
    }

    private void restart() throws Exception {
        log = restart(log);
    }

    // ---- entries used by the checks ------------------------------------------------------------

    /** A data entry whose payload names its index and term, so a mixed-up read shows. */
    protected static LogEntry data(long index, long term) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFromUtf8("entry " + index + " of term " + term)).build();
    }

    protected static LogEntry config(long index, long term, String... peers) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(List.of(peers))).build();
    }

    /** Data entries {@code from..to} inclusive, of {@code term}. */
    protected static List<LogEntry> range(long from, long to, long term) {
        List<LogEntry> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(data(i, term));
        }
        return out;
    }

    private static List<Long> indexes(List<LogEntry> entries) {
        return entries.stream().map(LogEntry::getIndex).toList();
    }

    private void assertBounds(long first, long last) {
        assertEquals(first, log.firstLogIndex(), "first log index of " + log);
        assertEquals(last, log.lastLogIndex(), "last log index of " + log);
    }

    private void assertHolds(List<LogEntry> entries) {
        for (LogEntry e : entries) {
            assertEquals(e, log.entry(e.getIndex()), "entry " + e.getIndex() + " of " + log);
            assertEquals(e.getTerm(), log.term(e.getIndex()), "term of entry " + e.getIndex() + " of " + log);
        }
    }

    // ---- a fresh log -----------------------------------------------------------------------------

    @Test
    void aFreshLogIsEmptyAndStartsAtOne() {
        assertBounds(1, 0);
        assertNull(log.entry(0));
        assertNull(log.entry(1));
        assertEquals(0, log.term(1));
        assertTrue(log.configurationEntries().isEmpty());
        assertNull(log.damageFoundAtOpen(), "a fresh log found no damage");
    }

    // ---- append and read -------------------------------------------------------------------------

    @Test
    void appendedEntriesReadBackEqualWithTheirTerms() {
        List<LogEntry> first = List.of(data(1, 1), config(2, 1, "a:1", "b:2"), data(3, 1));
        List<LogEntry> second = range(4, 6, 2);
        log.append(first);
        log.append(second);
        assertBounds(1, 6);
        assertHolds(first);
        assertHolds(second);
    }

    @Test
    void readsOutsideTheLogReturnNullAndTermZero() {
        log.append(range(1, 5, 1));
        for (long outside : new long[] {-3, 0, 6, 1000}) {
            assertNull(log.entry(outside), "entry " + outside);
            assertEquals(0, log.term(outside), "term of " + outside);
        }
    }

    @Test
    void anEmptyAppendChangesNothing() {
        log.append(List.of());
        assertBounds(1, 0);
        log.append(range(1, 2, 1));
        log.append(List.of());
        assertBounds(1, 2);
    }

    @Test
    void anAppendThatSkipsAnIndexIsRejectedNamingTheExpectedIndex() {
        log.append(range(1, 2, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.append(range(4, 5, 1)));
        assertTrue(e.getMessage() != null && e.getMessage().contains("3"), "the message names the expected index 3: " + e.getMessage());
        assertBounds(1, 2);
        assertNull(log.entry(4), "a rejected batch writes nothing");
    }

    @Test
    void anAppendThatOverlapsTheLogIsRejected() {
        log.append(range(1, 3, 1));
        assertThrows(IllegalArgumentException.class, () -> log.append(range(3, 4, 2)));
        assertBounds(1, 3);
        assertEquals(1, log.term(3), "the held entry is not overwritten");
    }

    @Test
    void aBatchWithAGapInsideIsRejectedWhole() {
        log.append(range(1, 2, 1));
        assertThrows(IllegalArgumentException.class, () -> log.append(List.of(data(3, 1), data(4, 1), data(6, 1))));
        assertBounds(1, 2);
        assertNull(log.entry(3), "nothing of a rejected batch is written");
    }

    // ---- truncate prefix -------------------------------------------------------------------------

    @Test
    void truncatePrefixDropsEarlierEntriesAndKeepsLaterOnesAtTheirIndexes() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(4);
        assertBounds(4, 10);
        assertNull(log.entry(3));
        assertEquals(0, log.term(3));
        assertHolds(range(4, 10, 1));
        log.append(range(11, 11, 2));
        assertEquals(2, log.term(11));
    }

    @Test
    void truncatePrefixAtOrBeforeTheFirstIndexIsANoOp() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(3);
        log.truncatePrefix(3);
        log.truncatePrefix(2);
        log.truncatePrefix(0);
        assertBounds(3, 5);
        assertHolds(range(3, 5, 1));
    }

    @Test
    void truncatePrefixToTheLastIndexKeepsOnlyTheLastEntry() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(5);
        assertBounds(5, 5);
        assertHolds(range(5, 5, 1));
    }

    @Test
    void truncatePrefixPastTheEndLeavesAnEmptyLogThatContinuesThere() {
        log.append(range(1, 5, 1));
        log.truncatePrefix(9);
        assertBounds(9, 8);
        assertNull(log.entry(5));
        assertThrows(IllegalArgumentException.class, () -> log.append(range(6, 6, 1)));
        log.append(range(9, 9, 3));
        assertBounds(9, 9);
        assertEquals(3, log.term(9));
    }

    // ---- truncate suffix -------------------------------------------------------------------------

    @Test
    void truncateSuffixDropsLaterEntriesAndTheLogContinuesAfterTheKeptOne() {
        log.append(range(1, 10, 1));
        log.truncateSuffix(6);
        assertBounds(1, 6);
        assertNull(log.entry(7));
        assertEquals(0, log.term(7));
        log.append(range(7, 8, 2));
        assertEquals(1, log.term(6));
        assertEquals(2, log.term(7));
        assertHolds(range(7, 8, 2));
    }

    @Test
    void truncateSuffixAtOrPastTheLastIndexIsANoOp() {
        log.append(range(1, 5, 1));
        log.truncateSuffix(5);
        log.truncateSuffix(100);
        assertBounds(1, 5);
        assertHolds(range(1, 5, 1));
    }

    @Test
    void truncateSuffixToJustBeforeTheFirstIndexEmptiesTheLogKeepingItsStart() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(5);
        log.truncateSuffix(4);
        assertBounds(5, 4);
        assertNull(log.entry(5));
        log.append(range(5, 5, 2));
        assertEquals(2, log.term(5));
    }

    // ---- reset -----------------------------------------------------------------------------------

    @Test
    void resetEmptiesTheLogAndTheNextAppendedIndexIsTheGivenOne() {
        log.append(List.of(data(1, 1), config(2, 1, "a:1")));
        log.append(range(3, 20, 1));
        log.reset(101);
        assertBounds(101, 100);
        assertNull(log.entry(2));
        assertEquals(0, log.term(20));
        assertTrue(log.configurationEntries().isEmpty());
        assertThrows(IllegalArgumentException.class, () -> log.append(range(21, 21, 1)));
        log.append(range(101, 102, 5));
        assertBounds(101, 102);
        assertEquals(5, log.term(102));
    }

    @Test
    void resetMayMoveTheLogBackwards() {
        log.append(range(1, 10, 1));
        log.reset(3);
        assertBounds(3, 2);
        assertNull(log.entry(5));
        log.append(range(3, 3, 4));
        assertEquals(4, log.term(3));
    }

    @Test
    void resetBelowIndexOneIsRejected() {
        log.append(range(1, 2, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.reset(0));
        assertTrue(e.getMessage() != null && e.getMessage().contains("0"), "the message names the value: " + e.getMessage());
        assertBounds(1, 2);
    }

    // ---- configuration entries -------------------------------------------------------------------

    @Test
    void configurationEntriesAreListedInIndexOrderAndFollowTruncations() {
        LogEntry c1 = config(1, 1, "a:1");
        LogEntry c3 = config(3, 1, "a:1", "b:1");
        LogEntry c5 = config(5, 2, "b:1");
        log.append(List.of(c1, data(2, 1), c3, data(4, 1), c5));
        assertEquals(List.of(c1, c3, c5), log.configurationEntries());
        log.truncateSuffix(4);
        assertEquals(List.of(c1, c3), log.configurationEntries());
        log.truncatePrefix(2);
        assertEquals(List.of(c3), log.configurationEntries());
        assertEquals(List.of("a:1", "b:1"), log.configurationEntries().get(0).getConfiguration().getPeersList());
        log.reset(50);
        assertEquals(List.of(), indexes(log.configurationEntries()));
    }

    // ---- restart ---------------------------------------------------------------------------------

    @Test
    void everythingAppendedIsThereAfterARestart() throws Exception {
        List<LogEntry> entries = List.of(data(1, 1), config(2, 1, "a:1", "b:2"), data(3, 2));
        log.append(entries);
        restart();
        assertBounds(1, 3);
        assertHolds(entries);
        assertEquals(List.of(entries.get(1)), log.configurationEntries());
        log.append(range(4, 4, 2));
        assertBounds(1, 4);
    }

    @Test
    void truncationsAreThereAfterARestart() throws Exception {
        log.append(List.of(config(1, 1, "a:1"), data(2, 1), config(3, 1, "a:1", "b:1")));
        log.append(range(4, 8, 2));
        log.append(List.of(config(9, 2, "b:1"), data(10, 2)));
        log.truncatePrefix(3);
        log.truncateSuffix(8);
        restart();
        assertBounds(3, 8);
        assertNull(log.entry(2));
        assertNull(log.entry(9));
        assertHolds(range(4, 8, 2));
        assertEquals(List.of(3L), indexes(log.configurationEntries()));
        log.append(range(9, 9, 3));
        assertEquals(3, log.term(9));
    }

    @Test
    void anEmptiedLogKeepsItsNextIndexAcrossARestart() throws Exception {
        log.append(range(1, 5, 1));
        log.truncatePrefix(9);
        restart();
        assertBounds(9, 8);
        log.reset(101);
        restart();
        assertBounds(101, 100);
        log.append(range(101, 101, 7));
        assertEquals(7, log.term(101));
    }

    // ---- closing ---------------------------------------------------------------------------------

    @Test
    void aClosedLogRefusesEntryReadsAndWritesWithAStorageException() {
        log.append(range(1, 3, 1));
        log.close();
        log.close(); // idempotent
        assertThrows(StorageException.class, () -> log.entry(1));
        assertThrows(StorageException.class, () -> log.term(1));
        assertThrows(StorageException.class, () -> log.append(range(4, 4, 1)));
        assertThrows(StorageException.class, () -> log.truncateSuffix(1));
        assertThrows(StorageException.class, () -> log.truncatePrefix(2));
        assertThrows(StorageException.class, () -> log.reset(9));
    }

    // ---- appendAsync -----------------------------------------------------------------------------

    /** Runs {@link LogStorage#appendAsync} and waits for its outcome; a failure is thrown. */
    private void appendAsyncAndWait(long truncateAfter, List<LogEntry> entries) throws Exception {
        java.util.concurrent.CompletableFuture<RuntimeException> outcome = new java.util.concurrent.CompletableFuture<>();
        log.appendAsync(truncateAfter, entries, outcome::complete);
        RuntimeException failure = outcome.get(30, TimeUnit.SECONDS);
        if (failure != null) {
            throw failure;
        }
    }

    @Test
    void appendAsyncMakesTheEntriesReadableAndDurableOnceDone() throws Exception {
        List<LogEntry> entries = List.of(data(1, 1), config(2, 1, "a:1", "b:2"), data(3, 1));
        appendAsyncAndWait(-1, entries);
        assertBounds(1, 3);
        assertHolds(entries);
        appendAsyncAndWait(-1, range(4, 5, 1));
        restart();
        assertBounds(1, 5);
        assertHolds(entries);
        assertEquals(List.of(entries.get(1)), log.configurationEntries());
    }

    @Test
    void appendAsyncCutsAfterTheGivenIndexThenAppendsAndBothSurviveARestart() throws Exception {
        log.append(List.of(data(1, 1), data(2, 1), data(3, 1), config(4, 1, "a:1"), data(5, 1), data(6, 1)));
        List<LogEntry> replacing = List.of(data(4, 2), data(5, 2));
        appendAsyncAndWait(3, replacing);
        assertBounds(1, 5);
        assertHolds(replacing);
        assertTrue(log.configurationEntries().isEmpty(), "the cut configuration entry is still listed: " + log.configurationEntries());
        restart();
        assertBounds(1, 5);
        assertHolds(replacing);
        assertNull(log.entry(6));
    }

    @Test
    void appendAsyncThatDoesNotContinueTheCutLogIsRejectedAndWritesNothing() {
        log.append(range(1, 6, 1));
        AtomicBoolean told = new AtomicBoolean();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> log.appendAsync(3, range(5, 6, 2), failure -> told.set(true)));
        assertTrue(e.getMessage().contains("4"), "names the index expected after the cut: " + e.getMessage());
        assertBounds(1, 6);
        assertHolds(range(1, 6, 1));
        assertTrue(!told.get(), "a rejected write has no outcome to tell");
    }

    // ---- concurrent readers ----------------------------------------------------------------------

    /**
     * The node writes from one thread while other threads read: a reader sees the log before or
     * after each mutation, never a bound without its entry nor an entry that is not what was
     * appended at its index.
     */
    @Test
    void concurrentReadersSeeWholeEntriesWhileTheWriterAppendsAndTruncates() throws Exception {
        int readers = 3;
        AtomicBoolean done = new AtomicBoolean();
        // The writer starts once every reader has read once: on a loaded machine it could
        // otherwise finish before a reader got a turn, and that reader would prove nothing.
        CountDownLatch firstReads = new CountDownLatch(readers);
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                results.add(pool.submit(() -> {
                    long reads = 0;
                    while (!done.get()) {
                        long first = log.firstLogIndex();
                        long last = log.lastLogIndex();
                        if (last < first - 1) {
                            throw new AssertionError("last index " + last + " below first index " + first + " - 1");
                        }
                        LogEntry e = log.entry(last);
                        if (e == null && last >= 1 && log.firstLogIndex() <= last) {
                            throw new AssertionError("entry " + last + " missing although the first index is " + log.firstLogIndex());
                        }
                        if (e != null && !e.equals(data(last, last))) {
                            throw new AssertionError("entry at " + last + " read as " + e);
                        }
                        if (++reads == 1) {
                            firstReads.countDown();
                        }
                    }
                    return reads;
                }));
            }
            assertTrue(firstReads.await(10, TimeUnit.SECONDS), "readers did not start");
            long next = 1;
            for (int batch = 0; batch < 300; batch++) {
                List<LogEntry> entries = new ArrayList<>();
                for (int k = 0; k < 8; k++, next++) {
                    entries.add(data(next, next));
                }
                log.append(entries);
                if (batch % 10 == 9) {
                    log.truncatePrefix(next - 50);
                }
            }
            done.set(true);
            for (Future<Long> f : results) {
                assertTrue(f.get(10, TimeUnit.SECONDS) > 0, "each reader made progress");
            }
            assertBounds(next - 50, next - 1); // the last batch also truncated the prefix
        } finally {
            done.set(true);
            pool.shutdownNow();
        }
    }
}
