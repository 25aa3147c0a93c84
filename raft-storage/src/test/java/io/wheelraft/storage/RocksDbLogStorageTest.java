package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.wheelraft.storage.TestEntries.data;
import static io.wheelraft.storage.TestEntries.range;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
    void entriesOfManyGroupsWrittenInterleavedReadBackInOrderFromTheMemtableAndAfterAReopen() throws Exception {
        // The log's memtable inserts each group's next key next to its previous one (a hint per
        // group tag): interleaved groups, truncations and a reset must still read back exactly.
        int groups = 64;
        RocksDbLogStorage[] logs = new RocksDbLogStorage[groups];
        long[] last = new long[groups];
        for (int g = 0; g < groups; g++) {
            logs[g] = open("g" + g);
        }
        java.util.Random random = new java.util.Random(7);
        for (int n = 0; n < 5_000; n++) {
            int g = random.nextInt(groups);
            last[g]++;
            logs[g].append(java.util.List.of(data(last[g], g + 1)));
            if (n % 997 == 0 && last[g] > 2) {
                logs[g].truncateSuffix(last[g] - 2); // overwritten below: keys inserted again behind the hint
                last[g] -= 2;
            }
        }
        assertReadsBack(logs, last);
        store.close();
        store = null;
        for (int g = 0; g < groups; g++) {
            logs[g] = open("g" + g);
        }
        assertReadsBack(logs, last);
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
            Path options = files.filter(f -> f.getFileName().toString().startsWith("OPTIONS-")).max(Path::compareTo).orElseThrow();
            assertTrue(java.nio.file.Files.readString(options).contains("memtable_insert_with_hint_prefix_extractor=rocksdb.FixedPrefix.4"),
                    "the store's options name the group-tag insert hint: " + options);
        }
    }

    private static void assertReadsBack(RocksDbLogStorage[] logs, long[] last) {
        for (int g = 0; g < logs.length; g++) {
            assertEquals(last[g], logs[g].lastLogIndex(), "last of group " + g);
            for (long i = 1; i <= last[g]; i++) {
                assertEquals(data(i, g + 1), logs[g].entry(i), "entry " + i + " of group " + g);
            }
        }
    }

    @Test
    void aGroupRemovedAtRunTimeComesBackWithItsEntriesWhileTheOthersKeepWriting() {
        RocksDbLogStorage a = open("a");
        RocksDbLogStorage b = open("b");
        a.append(range(1, 3, 1));
        b.append(range(1, 2, 7));
        a.close(); // the group leaves this process; the store and group b go on
        b.append(range(3, 5, 7));
        RocksDbLogStorage c = store.logStorage("c"); // a group created at run time
        c.append(range(1, 1, 9));
        RocksDbLogStorage again = store.logStorage("a");
        assertEquals(3, again.lastLogIndex());
        assertEquals(data(3, 1), again.entry(3));
        assertEquals(5, b.lastLogIndex());
        assertEquals(data(5, 7), b.entry(5));
        assertEquals(1, c.lastLogIndex());
        assertEquals(java.util.List.of("a", "b", "c"), store.groupIds().stream().sorted().toList());
    }

    @Test
    void groupsRegisteredInOneWriteKeepTheirOwnLogsAcrossAReopen() {
        RocksDbLogStorage x = open("x"); // registered on its own first
        assertEquals(2, store.registerGroups(java.util.List.of("a", "b", "x", "a")));
        assertEquals(0, store.registerGroups(java.util.List.of("a", "b")), "registered twice");
        RocksDbLogStorage a = store.logStorage("a");
        RocksDbLogStorage b = store.logStorage("b");
        RocksDbLogStorage c = store.logStorage("c"); // on its own, after the batch: a tag of its own
        a.append(range(1, 3, 1));
        b.append(range(1, 2, 7));
        c.append(range(1, 1, 9));
        x.append(range(1, 4, 2));
        store.close();
        store = null;
        assertEquals(data(3, 1), open("a").entry(3));
        RocksDbLogStorage b2 = store.logStorage("b");
        assertEquals(2, b2.lastLogIndex());
        assertEquals(data(2, 7), b2.entry(2));
        assertEquals(data(1, 9), store.logStorage("c").entry(1));
        assertEquals(4, store.logStorage("x").lastLogIndex());
        assertEquals(java.util.List.of("a", "b", "c", "x"), store.groupIds().stream().sorted().toList());
        assertThrows(IllegalArgumentException.class, () -> store.registerGroups(java.util.List.of("d", "")));
        assertEquals(java.util.List.of("a", "b", "c", "x"), store.groupIds().stream().sorted().toList(), "a refused batch registered some");
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
