package io.wheelraft.storage;

import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.wheelraft.storage.TestEntries.data;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WalPresizerTest {

    private static final long MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void aFreshStoreStartsOnAWalOfThePresizedLength() {
        try (RocksDbStore ignored = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withPresizedWalBytes(MIB))) {
            assertTrue(WalPresizer.liveWalBytes(dir) >= MIB, "live WAL is " + WalPresizer.liveWalBytes(dir) + " bytes");
        }
    }

    @Test
    void zeroTurnsPresizingOff() {
        try (RocksDbStore ignored = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withPresizedWalBytes(0))) {
            assertTrue(WalPresizer.liveWalBytes(dir) < 64 << 10, "live WAL is " + WalPresizer.liveWalBytes(dir) + " bytes");
        }
    }

    /** The point of pre-sizing: synced appends overwrite the file in place, so its length (and inode) stays put. */
    @Test
    void appendsWithinThePresizedLengthDoNotGrowTheWal() {
        try (RocksDbStore store = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withPresizedWalBytes(MIB))) {
            long before = WalPresizer.liveWalBytes(dir);
            RocksDbLogStorage log = store.logStorage("g");
            for (long i = 1; i <= 200; i++) {
                log.append(List.of(data(i, 1, TestEntries.payload(i, 100))));
            }
            assertEquals(before, WalPresizer.liveWalBytes(dir));
        }
    }

    /**
     * A 256 KiB memtable (and a WAL cap of 1.5 of them, as in the defaults) makes RocksDB switch
     * WAL files every few appends and reuse retired ones, so
     * later files are written over records of their previous use. After a truncation and a clean
     * reopen the log must read back exactly what was last written, and old WAL files must be reused
     * rather than piling up.
     */
    @Test
    void recycledWalFilesRecoverExactlyWhatWasWritten() throws IOException {
        RocksDbStoreOptions options = RocksDbStoreOptions.defaults().withWriteBufferBytes(256 << 10)
                .withMaxTotalWalBytes(384 << 10).withPresizedWalBytes(256 << 10);
        List<LogEntry> expected = new ArrayList<>();
        try (RocksDbStore store = RocksDbStore.open(dir, options)) {
            RocksDbLogStorage log = store.logStorage("g");
            for (long i = 1; i <= 2_000; i++) {
                log.append(List.of(data(i, 1, TestEntries.payload(i, 1_000))));
            }
            log.truncateSuffix(1_500); // the deleted tail still sits in older WAL files' records
            for (long i = 1; i <= 1_500; i++) {
                expected.add(data(i, 1, TestEntries.payload(i, 1_000)));
            }
            for (long i = 1_501; i <= 1_800; i++) {
                LogEntry entry = data(i, 2, TestEntries.payload(i + 7, 900));
                log.append(List.of(entry));
                expected.add(entry);
            }
            assertTrue(walFiles() <= 6, walFiles() + " WAL files in " + dir + ": retired ones are not being reused");
        }
        try (RocksDbStore store = RocksDbStore.open(dir, options)) {
            RocksDbLogStorage log = store.logStorage("g");
            assertEquals(1, log.firstLogIndex());
            assertEquals(1_800, log.lastLogIndex());
            for (LogEntry entry : expected) {
                assertArrayEquals(entry.toByteArray(), log.entry(entry.getIndex()).toByteArray(), "entry " + entry.getIndex());
            }
        }
    }

    private long walFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).count();
        }
    }
}
