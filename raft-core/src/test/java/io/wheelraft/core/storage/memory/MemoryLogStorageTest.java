package io.wheelraft.core.storage.memory;

import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    void nullBatchOrEntryIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> log.append(null));
        List<LogEntry> withNull = new ArrayList<>();
        withNull.add(null);
        assertThrows(IllegalArgumentException.class, () -> log.append(withNull));
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
    void truncateSuffixIntoCompactedEntriesIsRejected() {
        log.append(range(1, 10, 1));
        log.truncatePrefix(5);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> log.truncateSuffix(3));
        assertTrue(e.getMessage().contains("3") && e.getMessage().contains("5"), e.getMessage());
        assertEquals(10, log.lastLogIndex());
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

    private static List<Long> indexes(List<LogEntry> entries) {
        return entries.stream().map(LogEntry::getIndex).toList();
    }
}
