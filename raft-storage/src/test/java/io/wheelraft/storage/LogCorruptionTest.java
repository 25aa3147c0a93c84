package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static io.wheelraft.storage.TestEntries.conf;
import static io.wheelraft.storage.TestEntries.range;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Damages a closed store's data on purpose and checks each kind of damage is reported clearly. */
class LogCorruptionTest {

    @TempDir
    Path dir;

    /** Writes entries 1..10 of group "g" (the first group, so tag 1) and closes the store. */
    private void writeTenEntries() {
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            log.append(range(1, 4, 1));
            log.append(List.of(conf(5, 1, "a:1", "b:1")));
            log.append(range(6, 10, 2));
        }
    }

    /** A store that skips the walk at open, so damage is met by reads at run time. */
    private RocksDbStore readTimeOnly() {
        return RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withVerifyOnOpen(false));
    }

    private void damage(RawAction action) throws Exception {
        try (RawRocks raw = new RawRocks(dir)) {
            action.run(raw);
        }
    }

    private interface RawAction {
        void run(RawRocks raw) throws Exception;
    }

    private static void assertNames(LogCorruptionException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "message should name '" + p + "': " + e.getMessage());
        }
    }

    @Test
    void flippedByteInAStoredValueIsDetectedOnRead() throws Exception {
        writeTenEntries();
        damage(raw -> {
            byte[] key = LogKeys.key(1, 7);
            byte[] value = raw.db.get(raw.log, key);
            value[value.length - 2] ^= 0x01;
            raw.db.put(raw.log, key, value);
        });
        try (RocksDbStore store = readTimeOnly()) {
            RocksDbLogStorage log = store.logStorage("g");
            assertEquals(1, log.term(1));
            LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> log.entry(7));
            assertNames(e, "log entry 7", "checksum mismatch", dir.toAbsolutePath().toString());
            assertThrows(LogCorruptionException.class, () -> log.term(7));
        }
    }

    @Test
    void corruptLastEntryIsCutOffAndReported() throws Exception {
        writeTenEntries();
        damage(raw -> {
            byte[] key = LogKeys.key(1, 10);
            byte[] value = raw.db.get(raw.log, key);
            value[EntryCodec.HEADER] ^= 0x10;
            raw.db.put(raw.log, key, value);
        });
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains("log entry 10") && damage.contains("group 'g'")
                    && damage.contains("kept entries 1..9"), damage);
            assertEquals(9, log.lastLogIndex(), "cut back to the last verified entry");
            assertEquals(2, log.term(9));
        }
        // The offline check reports it instead of cutting.
        try (RocksDbStore store = RocksDbStore.openReadOnly(dir)) {
            assertEquals(9, store.logStorage("g").verifyAllEntries(), "the cut was durable");
        }
    }

    @Test
    void truncatedValueIsDetected() throws Exception {
        writeTenEntries();
        damage(raw -> {
            raw.db.put(raw.log, LogKeys.key(1, 3), new byte[] {1, 0, 0});
            byte[] four = raw.db.get(raw.log, LogKeys.key(1, 4));
            raw.db.put(raw.log, LogKeys.key(1, 4), java.util.Arrays.copyOf(four, four.length - 4));
        });
        try (RocksDbStore store = readTimeOnly()) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNames(assertThrows(LogCorruptionException.class, () -> log.entry(3)), "log entry 3", "truncated");
            assertNames(assertThrows(LogCorruptionException.class, () -> log.entry(4)), "log entry 4", "checksum");
        }
    }

    @Test
    void valueMovedUnderAnotherIndexIsDetected() throws Exception {
        writeTenEntries();
        damage(raw -> raw.db.put(raw.log, LogKeys.key(1, 2), raw.db.get(raw.log, LogKeys.key(1, 3))));
        try (RocksDbStore store = readTimeOnly()) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNames(assertThrows(LogCorruptionException.class, () -> log.entry(2)), "log entry 2");
        }
    }

    @Test
    void gapInIndexesIsCutOffAndReported() throws Exception {
        writeTenEntries();
        damage(raw -> raw.db.delete(raw.log, LogKeys.key(1, 6)));
        try (RocksDbStore store = RocksDbStore.openReadOnly(dir)) {
            LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> store.logStorage("g"));
            assertNames(e, "gap", "entry 6 is missing", dir.toAbsolutePath().toString());
        }
        // Without the open-time walk the gap is still caught when the entry is read.
        try (RocksDbStore store = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withVerifyOnOpen(false))) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNames(assertThrows(LogCorruptionException.class, () -> log.term(6)), "log entry 6", "missing");
        }
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains("entry 6 is missing") && damage.contains("kept entries 1..5"), damage);
            assertEquals(5, log.lastLogIndex());
        }
    }

    @Test
    void missingHeadOfTheLogEmptiesItAndIsReported() throws Exception {
        writeTenEntries();
        damage(raw -> raw.db.delete(raw.log, LogKeys.key(1, 1)));
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains("should start at index 1") && damage.contains("first stored entry is 2"), damage);
            assertEquals(1, log.firstLogIndex());
            assertEquals(0, log.lastLogIndex());
        }
    }

    @Test
    void aCorruptEntryInTheMiddleIsFoundAtOpenAndTheLogCutBeforeIt() throws Exception {
        writeTenEntries();
        damage(raw -> {
            byte[] key = LogKeys.key(1, 7);
            byte[] value = raw.db.get(raw.log, key);
            value[value.length - 2] ^= 0x01;
            raw.db.put(raw.log, key, value);
        });
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains("log entry 7") && damage.contains("kept entries 1..6"), damage);
            assertEquals(6, log.lastLogIndex());
            assertNull(log.entry(7), "nothing after the damage is used");
        }
    }

    @Test
    void corruptConfigurationCopyIsDetected() throws Exception {
        writeTenEntries();
        damage(raw -> {
            byte[] value = raw.db.get(raw.conf, LogKeys.key(1, 5));
            value[1] ^= 0x7f;
            raw.db.put(raw.conf, LogKeys.key(1, 5), value);
        });
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNames(assertThrows(LogCorruptionException.class, log::configurationEntries), "log entry 5", "configuration");
        }
    }

    @Test
    void unknownFormatVersionIsRefusedWithAClearMessage() throws Exception {
        writeTenEntries();
        damage(raw -> raw.db.put(raw.meta, "wheelraft/format_version".getBytes(StandardCharsets.UTF_8), LogKeys.longBytes(7)));
        StorageException e = assertThrows(StorageException.class, () -> RocksDbStore.open(dir));
        assertTrue(e.getMessage().contains("format version 7"), e.getMessage());
        assertTrue(e.getMessage().contains("reads only version 1"), e.getMessage());
    }

    @Test
    void logDataWithoutAFormatMarkerIsRefused() throws Exception {
        writeTenEntries();
        damage(raw -> raw.db.delete(raw.meta, "wheelraft/format_version".getBytes(StandardCharsets.UTF_8)));
        StorageException e = assertThrows(StorageException.class, () -> RocksDbStore.open(dir));
        assertTrue(e.getMessage().contains("no format version"), e.getMessage());
    }
}
