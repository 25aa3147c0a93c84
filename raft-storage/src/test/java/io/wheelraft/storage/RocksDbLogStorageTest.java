package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static io.wheelraft.storage.TestEntries.conf;
import static io.wheelraft.storage.TestEntries.data;
import static io.wheelraft.storage.TestEntries.range;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocksDbLogStorageTest {

    @TempDir
    Path dir;

    private RocksDbStore store;

    private RocksDbLogStorage open(String group) {
        if (store == null) {
            store = RocksDbStore.open(dir);
        }
        return store.logStorage(group);
    }

    private RocksDbLogStorage reopen(String group) {
        store.close();
        store = null;
        return open(group);
    }

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void freshLogIsEmptyAndStartsAtOne() {
        RocksDbLogStorage log = open("g");
        assertEquals(1, log.firstLogIndex());
        assertEquals(0, log.lastLogIndex());
        assertNull(log.entry(1));
        assertEquals(0, log.term(1));
        assertTrue(log.configurationEntries().isEmpty());
    }

    @Test
    void appendedEntriesReadBackEqualAfterReopen() {
        RocksDbLogStorage log = open("g");
        List<LogEntry> entries = List.of(data(1, 1), conf(2, 1, "a:1", "b:2"), data(3, 2, TestEntries.payload(3, 5000)));
        log.append(entries);
        assertEquals(3, log.lastLogIndex());

        log = reopen("g");
        assertEquals(1, log.firstLogIndex());
        assertEquals(3, log.lastLogIndex());
        for (LogEntry e : entries) {
            assertEquals(e, log.entry(e.getIndex()));
            assertEquals(e.getTerm(), log.term(e.getIndex()));
        }
        assertEquals(List.of(entries.get(1)), log.configurationEntries());
    }

    @Test
    void outOfRangeReadsReturnNullAndZero() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 5, 1));
        assertNull(log.entry(0));
        assertNull(log.entry(6));
        assertNull(log.entry(-3));
        assertEquals(0, log.term(6));
    }

    @Test
    void rejectsAppendThatDoesNotContinueTheLog() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 3, 1));
        IllegalArgumentException gap = assertThrows(IllegalArgumentException.class, () -> log.append(range(5, 6, 1)));
        assertTrue(gap.getMessage().contains("expected 4"), gap.getMessage());
        assertThrows(IllegalArgumentException.class, () -> log.append(List.of(data(4, 1), data(6, 1))));
        assertEquals(3, log.lastLogIndex());
        assertNull(log.entry(4), "a rejected batch writes nothing");
    }

    @Test
    void emptyAppendChangesNothing() {
        RocksDbLogStorage log = open("g");
        log.append(List.of());
        assertEquals(0, log.lastLogIndex());
    }

    @Test
    void truncatePrefixSurvivesReopen() {
        RocksDbLogStorage log = open("g");
        log.append(List.of(conf(1, 1, "a:1"), data(2, 1), conf(3, 1, "a:1", "b:1")));
        log.append(range(4, 10, 2));
        log.truncatePrefix(3);
        assertEquals(3, log.firstLogIndex());
        assertNull(log.entry(2));
        assertEquals(1, log.configurationEntries().size());

        log = reopen("g");
        assertEquals(3, log.firstLogIndex());
        assertEquals(10, log.lastLogIndex());
        assertNull(log.entry(1));
        assertEquals(3, log.configurationEntries().get(0).getIndex());
        log.append(range(11, 11, 2));
        assertEquals(11, log.lastLogIndex());
    }

    @Test
    void truncatePrefixAtOrBeforeFirstIsANoOp() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 5, 1));
        log.truncatePrefix(3);
        log.truncatePrefix(2);
        log.truncatePrefix(3);
        assertEquals(3, log.firstLogIndex());
        assertEquals(5, log.lastLogIndex());
    }

    @Test
    void truncatePrefixPastTheEndLeavesAnEmptyLogContinuingThere() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 5, 1));
        log.truncatePrefix(9);
        assertEquals(9, log.firstLogIndex());
        assertEquals(8, log.lastLogIndex());
        log = reopen("g");
        assertEquals(9, log.firstLogIndex());
        assertEquals(8, log.lastLogIndex());
        log.append(range(9, 9, 3));
        assertEquals(9, log.lastLogIndex());
    }

    @Test
    void truncateSuffixDropsTailIncludingConfigurationCopies() {
        RocksDbLogStorage log = open("g");
        log.append(List.of(data(1, 1), conf(2, 1, "a:1"), data(3, 1), conf(4, 1, "a:1", "b:1")));
        log.truncateSuffix(2);
        assertEquals(2, log.lastLogIndex());
        assertNull(log.entry(3));
        assertEquals(List.of(2L), log.configurationEntries().stream().map(LogEntry::getIndex).toList());

        log.append(List.of(data(3, 2)));
        log = reopen("g");
        assertEquals(3, log.lastLogIndex());
        assertEquals(2, log.term(3));
        assertEquals(1, log.configurationEntries().size());
    }

    @Test
    void truncateSuffixAtOrAfterLastIsANoOpAndBelowFirstEmptiesTheLog() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 6, 1));
        log.truncatePrefix(4);
        log.truncateSuffix(6);
        log.truncateSuffix(60);
        assertEquals(6, log.lastLogIndex());
        log.truncateSuffix(1);
        assertEquals(4, log.firstLogIndex());
        assertEquals(3, log.lastLogIndex());
        log = reopen("g");
        assertEquals(4, log.firstLogIndex());
        assertEquals(3, log.lastLogIndex());
    }

    @Test
    void resetEmptiesTheLogAndSetsTheNextIndexDurably() {
        RocksDbLogStorage log = open("g");
        log.append(List.of(conf(1, 1, "a:1")));
        log.append(range(2, 20, 1));
        log.reset(101);
        assertEquals(101, log.firstLogIndex());
        assertEquals(100, log.lastLogIndex());
        assertNull(log.entry(5));
        assertTrue(log.configurationEntries().isEmpty());
        assertThrows(IllegalArgumentException.class, () -> log.append(range(21, 21, 1)));

        RocksDbLogStorage reopened = reopen("g");
        assertEquals(101, reopened.firstLogIndex());
        assertEquals(100, reopened.lastLogIndex());
        reopened.append(range(101, 102, 5));
        assertEquals(5, reopened.term(102));
    }

    @Test
    void resetToABackwardIndexIsAllowed() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 10, 1));
        log.reset(3);
        assertEquals(3, log.firstLogIndex());
        assertEquals(2, log.lastLogIndex());
        assertThrows(IllegalArgumentException.class, () -> log.reset(0));
    }

    @Test
    void manyGroupsShareOneStoreIndependently() {
        int groups = 50;
        for (int g = 0; g < groups; g++) {
            RocksDbLogStorage log = open("group-" + g);
            log.append(range(1, g + 1, g + 1));
            if (g % 3 == 0) {
                log.truncatePrefix(2);
            }
            if (g % 5 == 0) {
                log.reset(1000);
            }
        }
        store.close();
        store = RocksDbStore.open(dir);
        for (int g = 0; g < groups; g++) {
            RocksDbLogStorage log = store.logStorage("group-" + g);
            long expectedFirst = g % 5 == 0 ? 1000 : (g % 3 == 0 && g > 0 ? 2 : 1);
            long expectedLast = g % 5 == 0 ? 999 : g + 1;
            assertEquals(expectedFirst, log.firstLogIndex(), "first of group " + g);
            assertEquals(expectedLast, log.lastLogIndex(), "last of group " + g);
            for (long i = expectedFirst; i <= expectedLast; i++) {
                assertEquals(data(i, g + 1), log.entry(i));
            }
        }
    }

    @Test
    void aGroupLogCanBeOpenedOnlyOnceAtATime() {
        RocksDbLogStorage log = open("g");
        assertThrows(IllegalStateException.class, () -> store.logStorage("g"));
        log.close();
        RocksDbLogStorage again = store.logStorage("g");
        assertEquals(0, again.lastLogIndex());
        assertThrows(IllegalArgumentException.class, () -> store.logStorage(""));
    }

    @Test
    void secondStoreOnTheSameDirectoryFailsNamingTheLock() {
        open("g");
        StorageException e = assertThrows(StorageException.class, () -> RocksDbStore.open(dir));
        assertTrue(e.getMessage().contains("already in use"), e.getMessage());
        assertTrue(e.getMessage().contains(dir.toAbsolutePath().toString()), e.getMessage());
    }

    @Test
    void closedStoreAndLogRejectCallsClearly() {
        RocksDbLogStorage log = open("g");
        log.append(range(1, 2, 1));
        store.close();
        StorageException e = assertThrows(StorageException.class, () -> log.entry(1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(StorageException.class, () -> store.logStorage("h"));
        store = null;
    }

    @Test
    void unsyncedStoreStillReadsBackAfterCleanClose() {
        store = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withSync(false));
        RocksDbLogStorage log = store.logStorage("g");
        log.append(range(1, 100, 1));
        log = reopen("g");
        assertEquals(100, log.lastLogIndex());
    }
}
