package io.wheelraft.storage;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The term and vote of many groups in one shared RocksDB store: round trips, reopening, many
 * groups written from many threads, damage reported with the group and key, deletion of one
 * group's meta, and failed writes surfacing as {@link StorageException} with nothing changed.
 */
class RocksDbMetaStorageTest {

    @TempDir
    Path tmp;

    private Path dir() {
        return tmp.resolve("log");
    }

    private <T> T withStore(Function<RocksDbStore, T> body) {
        try (RocksDbStore store = RocksDbStore.open(dir(), RocksDbStoreOptions.defaults().withPresizedWalBytes(0))) {
            return body.apply(store);
        }
    }

    @Test
    void aFreshGroupHasTermZeroNoVoteAndOpeningWritesNothing() {
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertEquals(0, meta.term());
                assertNull(meta.votedFor());
                assertFalse(meta.repairing());
            }
            assertEquals(List.of(), store.metaGroupIds(), "reading stores nothing");
            return null;
        });
    }

    @Test
    void termVoteAndRepairingSurviveReopen() {
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                meta.setTermAndVote(3, PeerId.parse("10.0.0.1:8080:2"));
                meta.setRepairing(true);
                meta.setTermAndVote(7, PeerId.parse("10.0.0.2:8081"));
                assertEquals(7, meta.term());
                assertTrue(meta.repairing(), "a term write keeps the repairing flag");
            }
            return null;
        });
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertEquals(7, meta.term());
                assertEquals(PeerId.parse("10.0.0.2:8081"), meta.votedFor());
                assertTrue(meta.repairing());
                meta.setRepairing(false);
                meta.setTermAndVote(8, null);
            }
            return null;
        });
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertEquals(8, meta.term());
                assertNull(meta.votedFor());
                assertFalse(meta.repairing());
            }
            return null;
        });
    }

    @Test
    void thousandsOfGroupsWrittenFromManyThreadsEachKeepTheirOwnTermAndVote() throws Exception {
        int groups = 3000;
        withStore(store -> {
            List<RocksDbMetaStorage> metas = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                metas.add(store.metaStorage("group-" + g));
            }
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 16; t++) {
                    int first = t;
                    done.add(pool.submit(() -> {
                        for (int g = first; g < groups; g += 16) {
                            metas.get(g).setTermAndVote(g + 1, new PeerId("peer", 1000 + g % 3));
                        }
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdownNow();
            }
            return null; // closing the store releases every open meta
        });
        withStore(store -> {
            assertEquals(groups, store.metaGroupIds().size());
            for (int g = 0; g < groups; g++) {
                try (RocksDbMetaStorage meta = store.metaStorage("group-" + g)) {
                    assertEquals(g + 1, meta.term(), "term of group " + g);
                    assertEquals(new PeerId("peer", 1000 + g % 3), meta.votedFor(), "vote of group " + g);
                }
            }
            return null;
        });
    }

    @Test
    void aGroupsMetaIsOpenOnceAtATimeAndClosingReleasesIt() {
        withStore(store -> {
            RocksDbMetaStorage meta = store.metaStorage("g");
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> store.metaStorage("g"));
            assertTrue(twice.getMessage().contains("'g'"), twice.getMessage());
            meta.close();
            meta.close();
            store.metaStorage("g").close();
            StorageException closed = assertThrows(StorageException.class, () -> meta.setTermAndVote(1, null));
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            assertEquals(0, meta.term());
            return null;
        });
    }

    @Test
    void aFlippedByteInOneGroupsValueIsReportedNamingTheGroupAndKeyAndOtherGroupsStillOpen() throws Exception {
        writeTerms("damaged", "intact");
        byte[] key = RocksDbStore.metaKey("damaged");
        try (RawRocks raw = new RawRocks(dir())) {
            byte[] value = raw.db.get(raw.meta, key);
            value[value.length - 2] ^= 0x10;
            raw.db.put(raw.meta, key, value);
        }
        withStore(store -> {
            LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> store.metaStorage("damaged"));
            String m = e.getMessage();
            assertTrue(m.contains("group 'damaged'") && m.contains("wheelraft/meta/damaged") && m.contains(dir().toString()), m);
            assertTrue(m.contains("checksum"), m);
            assertTrue(m.indexOf('\n') < 0, "one line: " + m);
            try (RocksDbMetaStorage intact = store.metaStorage("intact")) {
                assertEquals(5, intact.term());
            }
            // refused, not opened: a second attempt is refused the same way rather than "already open"
            assertThrows(LogCorruptionException.class, () -> store.metaStorage("damaged"));
            return null;
        });
    }

    @Test
    void aTruncatedValueOrAnUnknownLayoutIsRefused() throws Exception {
        writeTerms("short", "newer");
        try (RawRocks raw = new RawRocks(dir())) {
            raw.db.put(raw.meta, RocksDbStore.metaKey("short"), new byte[] {RocksDbMetaStorage.LAYOUT_VERSION, 0, 0});
            byte[] newer = raw.db.get(raw.meta, RocksDbStore.metaKey("newer"));
            newer[0] = 9;
            raw.db.put(raw.meta, RocksDbStore.metaKey("newer"), newer);
        }
        withStore(store -> {
            String shortMessage = assertThrows(LogCorruptionException.class, () -> store.metaStorage("short")).getMessage();
            assertTrue(shortMessage.contains("group 'short'") && shortMessage.contains("3 bytes"), shortMessage);
            String newerMessage = assertThrows(LogCorruptionException.class, () -> store.metaStorage("newer")).getMessage();
            assertTrue(newerMessage.contains("group 'newer'") && newerMessage.contains("layout version 9"), newerMessage);
            return null;
        });
    }

    @Test
    void destroyDeletesOnlyThatGroupsMeta() {
        writeTerms("gone", "kept");
        withStore(store -> {
            RocksDbMetaStorage gone = store.metaStorage("gone");
            gone.destroy();
            assertThrows(StorageException.class, () -> gone.setTermAndVote(9, null), "destroy closes the meta");
            assertEquals(List.of("kept"), store.metaGroupIds());
            return null;
        });
        withStore(store -> {
            try (RocksDbMetaStorage gone = store.metaStorage("gone"); RocksDbMetaStorage kept = store.metaStorage("kept")) {
                assertEquals(0, gone.term(), "a destroyed group starts afresh if it is ever hosted again");
                assertEquals(5, kept.term());
            }
            return null;
        });
    }

    @Test
    void aGroupsFileMetaIsTakenOverIntoTheStoreAndTheFileDeleted() {
        Path metaDir = tmp.resolve("g").resolve("meta");
        try (FileMetaStorage file = FileMetaStorage.open(metaDir)) {
            file.setTermAndVote(7, PeerId.parse("10.0.0.3:9000"));
            file.setRepairing(true);
        }
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertTrue(meta.takeOverFileMeta(metaDir));
                assertEquals(7, meta.term());
                assertEquals(PeerId.parse("10.0.0.3:9000"), meta.votedFor());
                assertTrue(meta.repairing());
                assertFalse(Files.exists(metaDir), "the file and its emptied directory are deleted");
                assertFalse(meta.takeOverFileMeta(metaDir), "nothing left to take over");
            }
            return null;
        });
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertEquals(7, meta.term(), "durable in the store");
                assertTrue(meta.repairing());
            }
            return null;
        });
    }

    @Test
    void aFileLeftBesideTheStoresValueIsDeletedNotRead() {
        writeTerms("g"); // term 5 in the store
        Path metaDir = tmp.resolve("g").resolve("meta");
        try (FileMetaStorage file = FileMetaStorage.open(metaDir)) {
            file.setTermAndVote(3, null);
        }
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertFalse(meta.takeOverFileMeta(metaDir));
                assertEquals(5, meta.term());
                assertFalse(Files.exists(metaDir.resolve(FileMetaStorage.FILE_NAME)));
            }
            return null;
        });
    }

    @Test
    void aDamagedFileIsReportedAndNothingIsTakenOver() throws IOException {
        Path metaDir = tmp.resolve("g").resolve("meta");
        Path file;
        try (FileMetaStorage meta = FileMetaStorage.open(metaDir)) {
            meta.setTermAndVote(7, null);
            file = meta.file();
        }
        byte[] all = Files.readAllBytes(file);
        all[30] ^= 0x40;
        Files.write(file, all);
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> meta.takeOverFileMeta(metaDir));
                assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
                assertEquals(0, meta.term());
            }
            assertEquals(List.of(), store.metaGroupIds());
            return null;
        });
        assertTrue(Files.exists(file), "the damaged file is kept as evidence");
    }

    @Test
    void metaWritesAreSyncedEvenWhenTheStoreIsNot() {
        // the store's sync option is for the log; a term or vote is always made durable before returning
        try (RocksDbStore store = RocksDbStore.open(dir(), RocksDbStoreOptions.defaults().withSync(false).withPresizedWalBytes(0));
             RocksDbMetaStorage meta = store.metaStorage("g")) {
            meta.setTermAndVote(4, PeerId.parse("a:1"));
            assertEquals(4, meta.term());
        }
        withStore(store -> {
            try (RocksDbMetaStorage meta = store.metaStorage("g")) {
                assertEquals(4, meta.term());
            }
            return null;
        });
    }

    @Test
    void aWriteThatFailsOnAFullDiskIsAStorageExceptionAndChangesNothing() throws Exception {
        Path mount = tmp.resolve("tiny");
        Files.createDirectories(mount);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        boolean mounted = p.waitFor() == 0;
        Assumptions.assumeTrue(mounted, "needs permission to mount a tmpfs (root on Linux) to fill a disk: "
                + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
        try {
            RocksDbStoreOptions options = RocksDbStoreOptions.defaults().withPresizedWalBytes(0)
                    .withWriteBufferBytes(64 << 10).withMaxTotalWalBytes(256 << 10);
            try (RocksDbStore store = RocksDbStore.open(mount.resolve("log"), options);
                 RocksDbMetaStorage meta = store.metaStorage("full")) {
                fillUp(mount.resolve("filler"));
                String longHost = "h".repeat(2000); // a big value fills what space is left quickly
                StorageException failed = null;
                long lastWritten = 0;
                for (long term = 1; term <= 100_000 && failed == null; term++) {
                    try {
                        meta.setTermAndVote(term, new PeerId(longHost, 1));
                        lastWritten = term;
                    } catch (StorageException e) {
                        failed = e;
                    }
                }
                assertNotNull(failed, "a full disk must fail a meta write");
                assertTrue(failed.getMessage().contains("group 'full'"), failed.getMessage());
                assertEquals(lastWritten, meta.term(), "a failed write leaves the term in memory as it was");
            }
        } finally {
            new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor();
        }
    }

    /** Writes term 5 with a vote for each group, then closes the store. */
    private void writeTerms(String... groups) {
        withStore(store -> {
            for (String g : groups) {
                try (RocksDbMetaStorage meta = store.metaStorage(g)) {
                    meta.setTermAndVote(5, PeerId.parse("a:1"));
                }
            }
            return null;
        });
    }

    /** Writes a file until the disk is full. */
    private static void fillUp(Path file) throws IOException {
        byte[] chunk = new byte[16 << 10];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
            }
        } catch (IOException full) {
            // full
        }
    }

    @Test
    void writesLaterOfManyGroupsShareSyncsAndAreReadableOnceDurableAndAfterReopen() throws Exception {
        int groups = 2_000;
        PeerId voter = PeerId.parse("10.0.0.9:8080");
        withStore(store -> {
            List<RocksDbMetaStorage> metas = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                metas.add(store.metaStorage("g" + g));
            }
            java.util.concurrent.CountDownLatch durable = new java.util.concurrent.CountDownLatch(groups);
            List<RuntimeException> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int g = 0; g < groups; g++) {
                RocksDbMetaStorage meta = metas.get(g);
                long term = g + 1;
                assertTrue(meta.writesLater());
                meta.setTermAndVoteLater(term, voter, failure -> {
                    if (failure != null) {
                        failures.add(failure);
                    } else if (meta.term() != term || !voter.equals(meta.votedFor())) {
                        failures.add(new IllegalStateException("group " + term + " reads " + meta.term() + " once durable"));
                    }
                    durable.countDown();
                });
            }
            try {
                assertTrue(durable.await(60, java.util.concurrent.TimeUnit.SECONDS), "writes left: " + durable.getCount());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertEquals(List.of(), failures);
            GroupCommitQueue queue = store.groupCommitQueue();
            assertEquals(groups, queue.jobs());
            assertTrue(queue.writes() < groups / 4, "2,000 groups took " + queue.writes() + " synced writes; they should share them");
            metas.forEach(RocksDbMetaStorage::close);
            return null;
        });
        withStore(store -> {
            for (int g = 0; g < groups; g++) {
                try (RocksDbMetaStorage meta = store.metaStorage("g" + g)) {
                    assertEquals(g + 1, meta.term());
                    assertEquals(voter, meta.votedFor());
                }
            }
            return null;
        });
    }

    @Test
    void aWriteLaterToAClosedStoreFailsThroughItsCallback() {
        RocksDbStore store = RocksDbStore.open(dir(), RocksDbStoreOptions.defaults().withPresizedWalBytes(0));
        RocksDbMetaStorage meta = store.metaStorage("g");
        store.close();
        List<RuntimeException> outcome = new ArrayList<>();
        meta.setTermAndVoteLater(4, null, outcome::add);
        assertEquals(1, outcome.size());
        assertTrue(outcome.get(0) instanceof StorageException, outcome.toString());
        assertTrue(outcome.get(0).getMessage().contains("group 'g'"), outcome.get(0).getMessage());
        assertEquals(0, meta.term(), "a failed write changes nothing");
    }
}
