package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Damages a closed store's files the way a bad disk does (bytes flipped inside WAL records and
 * SST blocks) and checks the store reports it through {@code damageFoundAtOpen()}, keeps only
 * what verified, and never uses anything after the damage; and that a full disk reaches every
 * group's failure listener once and the store still closes.
 */
class StorageDamageTest {

    private static final int ENTRIES = 2000;
    /** The tmpfs the full-disk test fills is 6 MiB; nothing it writes goes past this. */
    private static final long FILL_LIMIT_BYTES = 16L << 20;

    @TempDir
    Path tmp;

    /** Small memtables and WAL files, so a few thousand appends rotate, recycle and flush. */
    private static RocksDbStoreOptions smallOptions() {
        return RocksDbStoreOptions.defaults().withWriteBufferBytes(256 << 10).withMaxTotalWalBytes(384 << 10)
                .withPresizedWalBytes(512 << 10);
    }

    private static LogEntry entry(long index) {
        return TestEntries.data(index, 1, TestEntries.payload(index, 100));
    }

    /** Appends entries one by one, unsynced for speed (a clean close syncs the WAL; no crash is simulated here). */
    private void write(Path dir, RocksDbStoreOptions options, long from, long to) {
        try (RocksDbStore store = RocksDbStore.open(dir, options.withSync(false))) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNull(log.damageFoundAtOpen(), "a store closed cleanly must open without damage");
            for (long i = from; i <= to; i++) {
                log.append(List.of(entry(i)));
            }
        }
    }

    @Test
    void cleanReopensOfRecycledWalFilesReportNoDamage() {
        Path dir = tmp.resolve("log");
        for (int round = 0; round < 4; round++) {
            write(dir, smallOptions(), round * 1000L + 1, round * 1000L + 1000);
        }
        try (RocksDbStore store = RocksDbStore.open(dir, smallOptions())) {
            RocksDbLogStorage log = store.logStorage("g");
            assertNull(log.damageFoundAtOpen());
            assertEquals(4000, log.lastLogIndex());
            assertEquals(4000, log.verifyAllEntries());
        }
    }

    @Test
    void flippedBytesInsideWalRecordsAreReportedAndOnlyTheVerifiedPrefixIsKept() throws IOException {
        Path dir = tmp.resolve("log");
        RocksDbStoreOptions options = RocksDbStoreOptions.defaults().withPresizedWalBytes(4 << 20);
        write(dir, options, 1, ENTRIES);
        Path wal = newestWal(dir);
        flip(wal, 100_000, 64);

        try (RocksDbStore store = RocksDbStore.open(dir, options)) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertNotNull(damage, "flipped WAL records must be reported");
            assertTrue(damage.contains(wal.getFileName().toString()), damage);
            assertTrue(damage.contains("group 'g'"), damage);
            long last = log.lastLogIndex();
            assertTrue(last > 0 && last < ENTRIES, "the log keeps a verified prefix, got last=" + last);
            for (long i = 1; i <= last; i++) {
                assertEquals(entry(i), log.entry(i), "entry " + i + " of the kept prefix");
            }
            assertNull(log.entry(last + 1), "nothing after the damage is used");
        }
    }

    @Test
    void damageInTheLastRecordsOfTheWalIsReported() throws IOException {
        Path dir = tmp.resolve("log");
        RocksDbStoreOptions options = RocksDbStoreOptions.defaults().withPresizedWalBytes(4 << 20);
        write(dir, options, 1, 10);
        Path wal = newestWal(dir);
        // A clean close trims the live WAL to its records; these ten entries are its last records.
        flip(wal, 20, 4);
        try (RocksDbStore store = RocksDbStore.open(dir, options)) {
            assertNotNull(store.logStorage("g").damageFoundAtOpen());
        }
    }

    @Test
    void flippedBytesInAnSstMoveTheStoreAsideAndAreReported() throws IOException {
        Path dir = tmp.resolve("log");
        write(dir, smallOptions(), 1, 6000);
        Path sst;
        try (Stream<Path> files = Files.list(dir)) {
            sst = files.filter(p -> p.toString().endsWith(".sst")).max(Comparator.comparingLong(StorageDamageTest::size)).orElseThrow();
        }
        flip(sst, size(sst) / 2, 64);

        try (RocksDbStore store = RocksDbStore.open(dir, smallOptions())) {
            RocksDbLogStorage log = store.logStorage("g");
            String damage = log.damageFoundAtOpen();
            assertNotNull(damage);
            assertTrue(damage.contains(sst.getFileName().toString()), damage);
            assertTrue(damage.contains("moved the store aside"), damage);
            assertEquals(0, log.lastLogIndex(), "the fresh store is empty");
        }
        List<Path> aside;
        try (Stream<Path> files = Files.list(tmp)) {
            aside = files.filter(p -> p.getFileName().toString().startsWith("log.damaged-")).toList();
        }
        assertEquals(1, aside.size(), "the damaged store is kept as evidence");
        assertTrue(Files.exists(aside.get(0).resolve(sst.getFileName())));
        try (RocksDbStore store = RocksDbStore.open(dir, smallOptions())) {
            assertNull(store.logStorage("g").damageFoundAtOpen(), "the next open of the fresh store is clean");
        }
    }

    @Test
    void aDamagedSstBlockFoundByAReadNamesTheEntryGroupAndFile() throws IOException {
        Path dir = tmp.resolve("log");
        write(dir, smallOptions(), 1, 6000);
        Path sst;
        try (Stream<Path> files = Files.list(dir)) {
            sst = files.filter(p -> p.toString().endsWith(".sst")).max(Comparator.comparingLong(StorageDamageTest::size)).orElseThrow();
        }
        flip(sst, size(sst) / 2, 64);
        // Without the check at open, the damage is met by a read at run time.
        try (RocksDbStore store = RocksDbStore.open(dir, smallOptions().withVerifyOnOpen(false))) {
            RocksDbLogStorage log = store.logStorage("g");
            io.wheelraft.core.spi.LogCorruptionException first = null;
            for (long i = log.firstLogIndex(); i <= log.lastLogIndex() && first == null; i++) {
                try {
                    log.entry(i);
                } catch (io.wheelraft.core.spi.LogCorruptionException e) {
                    first = e;
                }
            }
            assertNotNull(first, "some entry sits in the damaged block");
            String m = first.getMessage();
            assertTrue(m.contains("read of log entry ") && m.contains("group 'g'") && m.contains(sst.getFileName().toString()), m);
            assertTrue(m.indexOf('\n') < 0, "one line: " + m);
        }
    }

    /**
     * Fills a 6 MiB tmpfs under a store with two groups. However RocksDB first meets the full disk
     * (a background flush, a WAL write callback, or a write of ours), both groups' listeners are told
     * once, and close() returns: RocksDB's own close once waited without end for a flush it retried
     * every second on the full disk. The preemptive bound turns such a hang into a failure.
     */
    @Test
    void aFullDiskReachesEveryGroupsListenerOnceAndTheStoreStillCloses() throws Exception {
        Path mount = tmp.resolve("tiny");
        Files.createDirectories(mount);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        boolean mounted = p.waitFor() == 0;
        Assumptions.assumeTrue(mounted, "needs permission to mount a tmpfs (root on Linux) to fill a disk: "
                + new String(p.getInputStream().readAllBytes()).trim());
        try {
            assertTrue(Files.getFileStore(mount).getTotalSpace() <= FILL_LIMIT_BYTES,
                    "the tmpfs is mounted, so filling it cannot fill the real disk");
            assertTimeoutPreemptively(Duration.ofMinutes(2), () -> fillAndClose(mount),
                    "the store must report the full disk and close; a hang here is RocksDB waiting on a failing flush");
        } finally {
            new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor();
        }
    }

    private static void fillAndClose(Path mount) throws IOException {
        List<StorageException> toldG = new CopyOnWriteArrayList<>();
        List<StorageException> toldH = new CopyOnWriteArrayList<>();
        RocksDbStoreOptions options = RocksDbStoreOptions.defaults().withPresizedWalBytes(0)
                .withWriteBufferBytes(256 << 10).withMaxTotalWalBytes(1 << 20);
        try (RocksDbStore store = RocksDbStore.open(mount.resolve("log"), options)) {
            RocksDbLogStorage g = store.logStorage("g");
            RocksDbLogStorage h = store.logStorage("h");
            g.onAsyncFailure(toldG::add);
            h.onAsyncFailure(toldH::add);
            fillUp(mount.resolve("filler"));
            long deadline = System.nanoTime() + 20_000_000_000L;
            long index = 1;
            while (toldG.isEmpty() && System.nanoTime() < deadline) {
                try {
                    g.append(List.of(TestEntries.data(index, 1, TestEntries.payload(index, 4000))));
                    index++;
                } catch (StorageException e) {
                    // the failed write itself is the caller's to handle; the listeners are what this test watches
                }
            }
            assertEquals(1, toldG.size(), "the writing group's listener is told once");
            assertEquals(1, toldH.size(), "so is the other group's: they share the WAL");
            String message = toldG.get(0).getMessage();
            assertTrue(message.contains(mount.toString()) && message.contains("no longer promise durability"), message);
        }
        assertEquals(1, toldG.size(), "told once, also after close");
        assertEquals(1, toldH.size(), "told once, also after close");
    }

    /** Writes a file until the disk is full (at most {@link #FILL_LIMIT_BYTES}), leaving the last byte used. */
    private static void fillUp(Path file) throws IOException {
        byte[] chunk = new byte[64 << 10];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(file)) {
            while (written < FILL_LIMIT_BYTES) {
                out.write(chunk);
                written += chunk.length;
            }
        } catch (IOException full) {
            // full
        }
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.APPEND)) {
            for (int i = 0; i < chunk.length; i++) {
                out.write(1);
                out.flush();
            }
        } catch (IOException full) {
            // to the last byte
        }
    }

    static Path newestWal(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().matches("\\d+\\.log"))
                    .max(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().replace(".log", ""))))
                    .orElseThrow();
        }
    }

    /** Inverts {@code count} bytes of {@code file} at {@code offset}. */
    static void flip(Path file, long offset, int count) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(count);
            ch.read(b, offset);
            b.flip();
            for (int i = 0; i < b.limit(); i++) {
                b.put(i, (byte) ~b.get(i));
            }
            ch.write(b, offset);
            ch.force(true);
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
