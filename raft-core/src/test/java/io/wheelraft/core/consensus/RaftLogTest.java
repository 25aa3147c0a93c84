package io.wheelraft.core.consensus;

import com.google.protobuf.ByteString;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.data;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The log view over storage plus its in-memory unstable tail. */
class RaftLogTest {

    private final MemoryLogStorage storage = new MemoryLogStorage();

    private static List<LogEntry> run(long from, long to, long term) {
        List<LogEntry> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(data(i, term, "e" + i + "t" + term));
        }
        return out;
    }

    /** Carries out a persist request exactly as the node shell's LogWriter does. */
    private void write(RaftLog.PersistRequest w) {
        if (w.truncateAfter() >= 0) {
            storage.truncateSuffix(w.truncateAfter());
        }
        storage.append(w.entries());
    }

    @Test
    void stableToIgnoresStaleAcknowledgementsAfterATruncation() {
        RaftLog log = new RaftLog(storage, 0, 0);
        log.appendFromLeader(0, run(1, 3, 1));
        log.appendFromLeader(1, run(2, 2, 2)); // replaces 2..3 before the disk acknowledged them
        assertFalse(log.stableTo(3, 1), "index 3 is gone");
        assertFalse(log.stableTo(2, 1), "index 2 now holds term 2");
        assertEquals(0, log.persistedIndex());
        assertTrue(log.stableTo(2, 2));
        assertEquals(2, log.persistedIndex());
        assertFalse(log.stableTo(2, 2), "a repeated acknowledgement advances nothing");
    }

    @Test
    void durableEntriesAreReadFromTheCacheAndAReplacedOneIsNeverServedFromIt() {
        RecentEntries recent = new RecentEntries(8, 1024);
        RaftLog log = new RaftLog(storage, 0, 0, recent);
        write(log.appendFromLeader(0, run(1, 4, 1)));
        assertTrue(log.stableTo(4, 1));
        assertEquals(1, recent.get(3).getTerm(), "persisted entries are kept");
        storage.truncateSuffix(0); // storage would now fail the read: the cache must serve it
        assertEquals(1, log.term(3));
        assertEquals(3, log.entry(3).getIndex());
        storage.append(run(1, 4, 1)); // put the entries back: the disk holds them
        // A new leader replaces 3..4 with term 2: the cached term-1 entries must be gone.
        RaftLog.PersistRequest replacement = log.appendFromLeader(2, run(3, 3, 2));
        assertEquals(2, replacement.truncateAfter());
        assertNull(recent.get(3));
        assertNull(recent.get(4));
        assertEquals(2, log.term(3));
        assertEquals(0, log.term(4), "index 4 is gone");
        write(replacement);
        assertTrue(log.stableTo(3, 2));
        assertEquals(2, recent.get(3).getTerm());
    }

    @Test
    void theLastDurableEntrysTermIsKeptWithoutTheRingAndNeverServedForAReplacedEntry() {
        RaftLog log = new RaftLog(storage, 0, 0); // no recent-entries ring, as a quiet group's
        write(log.appendFromLeader(0, run(1, 4, 1)));
        assertTrue(log.stableTo(4, 1));
        storage.truncateSuffix(0); // a read would now find nothing: the log must not need one
        assertEquals(1, log.term(4));
        assertTrue(log.matchTerm(4, 1), "a heartbeat at the end of the log matches without a read");
        assertTrue(log.isUpToDate(4, 1));
        assertEquals(0, log.term(3), "only the last entry's term is kept; earlier ones are read");
        storage.append(run(1, 4, 1)); // the disk holds them again
        // A new leader replaces 3..4 with term 2: the kept term of index 4 must go with it.
        RaftLog.PersistRequest replacement = log.appendFromLeader(2, run(3, 3, 2));
        assertEquals(0, log.term(4), "index 4 is gone");
        assertFalse(log.matchTerm(4, 1));
        write(replacement);
        assertTrue(log.stableTo(3, 2));
        storage.truncateSuffix(0);
        assertEquals(2, log.term(3));
        assertFalse(log.isUpToDate(3, 1), "the log ends in term 2 now");
    }

    @Test
    void aLogReopenedOverStorageReadsItsLastTermOnceAndKeepsIt() {
        storage.append(run(1, 4, 1));
        RaftLog log = new RaftLog(storage, 0, 0);
        assertEquals(1, log.lastTerm()); // read from storage
        storage.truncateSuffix(0);
        assertEquals(1, log.lastTerm(), "kept after the first read");
        assertEquals(0, log.term(2), "an earlier entry is still read from storage");
    }

    @Test
    void appendFromLeaderSkipsEntriesAlreadyHeld() {
        RaftLog log = new RaftLog(storage, 0, 0);
        RaftLog.PersistRequest first = log.appendFromLeader(0, run(1, 2, 1));
        assertNotNull(first);
        assertNull(log.appendFromLeader(0, run(1, 2, 1)), "a duplicated append needs no disk work");
        RaftLog.PersistRequest more = log.appendFromLeader(0, run(1, 3, 1));
        assertEquals(-1, more.truncateAfter());
        assertEquals(List.of(3L), more.entries().stream().map(LogEntry::getIndex).toList());
        assertEquals(3, log.lastIndex());
    }

    @Test
    void entriesRespectsMaxCountAndMaxBytesButReturnsAtLeastOne() {
        List<LogEntry> big = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            big.add(LogEntry.newBuilder().setIndex(i).setTerm(1).setType(EntryType.ENTRY_TYPE_DATA)
                    .setData(ByteString.copyFrom(new byte[100])).build());
        }
        storage.append(big.subList(0, 5));
        RaftLog log = new RaftLog(storage, 0, 0);
        log.append(big.subList(5, 10)); // half stable, half unstable: reads span both
        assertEquals(3, log.entries(4, 3, Long.MAX_VALUE).size());
        assertEquals(List.of(4L, 5L, 6L), log.entries(4, 3, Long.MAX_VALUE).stream().map(LogEntry::getIndex).toList());
        assertEquals(2, log.entries(1, 100, 250).size(), "each entry counts as about 116 bytes");
        assertEquals(1, log.entries(1, 100, 1).size(), "never empty while entries are available");
        assertEquals(0, log.entries(11, 100, 1000).size());
        assertEquals(10, log.entries(1, 100, Long.MAX_VALUE).size());
    }

    @Test
    void isUpToDateComparesLastTermThenLength() {
        storage.append(List.of(data(1, 1, "a"), data(2, 3, "b")));
        RaftLog log = new RaftLog(storage, 0, 0);
        assertTrue(log.isUpToDate(2, 3));
        assertTrue(log.isUpToDate(1, 4));
        assertFalse(log.isUpToDate(9, 2));
        assertFalse(log.isUpToDate(1, 3));
    }

    /**
     * Entries handed to the disk but not yet acknowledged can still be overwritten by a new
     * leader. The disk receives both writes in order, so the second must truncate what the first
     * wrote: replaying the persist requests in order must leave storage equal to the log.
     */
    @Test
    void overwritingEntriesNotYetAcknowledgedTruncatesThemOnDiskToo() {
        RaftLog log = new RaftLog(storage, 0, 0);
        RaftLog.PersistRequest old = log.appendFromLeader(0, run(1, 3, 1));
        RaftLog.PersistRequest replacement = log.appendFromLeader(1, run(2, 2, 2));
        write(old); // the disk lane carries out the first write ...
        // ... then the second, while the acknowledgement of the first is still on its way to the lane
        assertDoesNotThrow(() -> write(replacement), "the replacing write must first truncate the entries the earlier write put on disk");
        assertEquals(log.lastIndex(), storage.lastLogIndex(), "storage keeps the replaced entry 3");
        assertEquals(2, storage.term(2));
    }
    @Test
    void compactionForgetsEntriesUpToTheSnapshotMinusTheMarginAndKeepsTheBoundaryTerm() {
        storage.append(run(1, 10, 1));
        storage.append(run(11, 20, 2));
        RaftLog log = new RaftLog(storage, 0, 0);
        assertEquals(13, log.compact(15, 3), "first index kept");
        assertEquals(12, log.baseIndex());
        assertEquals(2, log.term(12), "the boundary keeps its term for the log-matching check");
        assertEquals(0, log.term(11));
        assertNull(log.entry(12));
        assertNotNull(log.entry(13));
        assertEquals(-1, log.compact(14, 3), "a boundary never moves back");
    }

    @Test
    void compactionNeverPassesWhatIsOnDisk() {
        storage.append(run(1, 5, 1));
        RaftLog log = new RaftLog(storage, 0, 0);
        log.append(run(6, 8, 1)); // not yet acknowledged by the disk
        assertEquals(6, log.compact(8, 0));
        assertEquals(5, log.baseIndex());
        assertNotNull(log.entry(6));
    }

    @Test
    void installedSnapshotKeepsTheSuffixWhenTheLogHoldsItsLastEntry() {
        storage.append(run(1, 10, 1));
        RaftLog log = new RaftLog(storage, 0, 0);
        assertFalse(log.installSnapshot(6, 1), "entry 6 of term 1 is held: keep 7..10 (Raft section 7)");
        assertEquals(6, log.baseIndex());
        assertEquals(10, log.lastIndex());
        assertTrue(log.installSnapshot(8, 3), "a different term at 8: the whole log goes");
        assertEquals(8, log.lastIndex());
        assertEquals(3, log.lastTerm());
        assertEquals(8, log.persistedIndex(), "the snapshot itself is durable");
    }

    @Test
    void restartAfterCompactionWithAMarginReadsTheEntriesKeptBeforeTheSnapshot() {
        storage.append(run(1, 20, 1));
        storage.truncatePrefix(11);
        RaftLog log = new RaftLog(storage, 15, 1);
        assertEquals(11, log.baseIndex(), "the first stored entry is the base (its term is known)");
        assertEquals(1, log.term(11));
        assertNotNull(log.entry(12));
        assertEquals(20, log.lastIndex());
    }

    @Test
    void refusesALogWithAGapAfterTheSnapshot() {
        storage.append(run(1, 20, 1));
        storage.truncatePrefix(11);
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> new RaftLog(storage, 5, 1));
        assertTrue(e.getMessage().contains("6..10"), e.getMessage());
    }
}
