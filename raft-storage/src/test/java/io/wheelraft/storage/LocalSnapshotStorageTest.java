package io.wheelraft.storage;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LocalSnapshotStorageTest {

    @TempDir
    Path dir;

    private static final byte[] BIG = TestEntries.payload(1, 200_000);
    private static final byte[] SMALL = "counter=42".getBytes();

    private static SnapshotMeta meta(long index, long term) {
        return SnapshotMeta.newBuilder().setLastIncludedIndex(index).setLastIncludedTerm(term)
                .setConfiguration(ConfigurationEntry.newBuilder().addPeers("a:1").addPeers("b:2")).build();
    }

    /** Saves a snapshot with files "state" (SMALL) and "blobs/big" (BIG). */
    private static SnapshotMeta save(LocalSnapshotStorage storage, long index, long term) throws IOException {
        SnapshotWriter writer = storage.create();
        try (OutputStream out = writer.addFile("state")) {
            out.write(SMALL);
        }
        try (OutputStream out = writer.addFile("blobs/big")) {
            out.write(BIG);
        }
        return writer.commit(meta(index, term));
    }

    private static byte[] readAll(SnapshotReader reader, String name) throws IOException {
        try (InputStream in = reader.openFile(name)) {
            return in.readAllBytes();
        }
    }

    private List<String> children() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void emptyStorageHasNoSnapshot() {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            assertNull(storage.open());
        }
    }

    @Test
    void openedLazilyTheDirectoryAndItsMissingParentsAppearOnlyWithTheFirstSnapshot() throws IOException {
        aMissingDirectoryAppearsOnlyWithTheFirstSnapshot(LocalSnapshotStorage::openLazily);
    }

    @Test
    void openedAsAbsentItIsTheLazyStorageOfAMissingDirectory() throws IOException {
        aMissingDirectoryAppearsOnlyWithTheFirstSnapshot(LocalSnapshotStorage::openAbsent);
    }

    private void aMissingDirectoryAppearsOnlyWithTheFirstSnapshot(Function<Path, LocalSnapshotStorage> opener) throws IOException {
        Path group = dir.resolve("group-7");
        Path snapshots = group.resolve("snapshot");
        try (LocalSnapshotStorage storage = opener.apply(snapshots)) {
            assertNull(storage.open());
            assertFalse(Files.exists(group), "opening creates nothing");
            save(storage, 10, 2);
            assertTrue(Files.isDirectory(snapshots));
        }
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.openLazily(snapshots);
             SnapshotReader reader = storage.open()) {
            assertEquals(10, reader.meta().getLastIncludedIndex(), "an existing directory is opened as open() does");
            assertArrayEquals(BIG, readAll(reader, "blobs/big"));
        }
    }

    @Test
    void openedLazilyAReceivedSnapshotCreatesTheDirectory() throws IOException {
        Path followerDir = dir.resolve("follower").resolve("snapshot");
        try (LocalSnapshotStorage leader = LocalSnapshotStorage.open(dir.resolve("leader"));
             LocalSnapshotStorage follower = LocalSnapshotStorage.openLazily(followerDir)) {
            save(leader, 100, 3);
            assertFalse(Files.exists(followerDir));
            try (SnapshotReader source = leader.open()) {
                SnapshotReceiver receiver = follower.receive(source.meta());
                copy(source, receiver, 70_000);
                receiver.complete().close();
            }
        }
        try (LocalSnapshotStorage follower = LocalSnapshotStorage.openLazily(followerDir);
             SnapshotReader reader = follower.open()) {
            assertEquals(100, reader.meta().getLastIncludedIndex());
        }
    }

    @Test
    void committedSnapshotIsVisibleWithSizesAndChecksums() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotMeta stored = save(storage, 10, 2);
            assertEquals(2, stored.getFilesCount());
            SnapshotFile big = stored.getFiles(1);
            assertEquals("blobs/big", big.getName());
            assertEquals(BIG.length, big.getSize());
            assertEquals(DurableFiles.crc(BIG), big.getCrc32C());

            try (SnapshotReader reader = storage.open()) {
                assertEquals(stored, reader.meta());
                assertEquals(meta(10, 2).getConfiguration(), reader.meta().getConfiguration());
                assertArrayEquals(SMALL, readAll(reader, "state"));
                assertArrayEquals(BIG, readAll(reader, "blobs/big"));
                assertEquals(ByteString.copyFrom(BIG, 1000, 500), reader.readChunk("blobs/big", 1000, 500));
                assertEquals(ByteString.copyFrom(BIG, BIG.length - 10, 10), reader.readChunk("blobs/big", BIG.length - 10, 500));
                assertTrue(reader.readChunk("blobs/big", BIG.length, 500).isEmpty());
                assertThrows(IllegalArgumentException.class, () -> reader.readChunk("nope", 0, 10));
                assertThrows(IllegalArgumentException.class, () -> reader.readChunk("state", 999, 10));
            }
        }
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir);
             SnapshotReader reader = storage.open()) {
            assertEquals(10, reader.meta().getLastIncludedIndex());
            assertArrayEquals(BIG, readAll(reader, "blobs/big"));
        }
    }

    /** A witness's snapshots hold no file: saved by itself, or received from a leader as metadata only. */
    @Test
    void metadataOnlySnapshotsAreSavedReceivedAndReopened() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotMeta saved = storage.create().commit(meta(7, 1));
            assertEquals(0, saved.getFilesCount());
            try (SnapshotReader reader = storage.open()) {
                assertEquals(7, reader.meta().getLastIncludedIndex());
                assertEquals(meta(7, 1).getConfiguration(), reader.meta().getConfiguration());
            }
            SnapshotReceiver receiver = storage.receive(meta(20, 3));
            try (SnapshotReader received = receiver.complete()) {
                assertEquals(20, received.meta().getLastIncludedIndex());
                assertEquals(0, received.meta().getFilesCount());
            }
        }
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir);
             SnapshotReader reader = storage.open()) {
            assertNull(storage.damageFoundAtOpen(), "a snapshot without files is not damage");
            assertEquals(20, reader.meta().getLastIncludedIndex());
            assertEquals(3, reader.meta().getLastIncludedTerm());
        }
        assertNull(LocalSnapshotStorage.checkOffline(dir).damage(), "verify --data accepts a metadata-only snapshot");
    }

    @Test
    void nothingIsVisibleBeforeCommitAndAbortKeepsThePreviousSnapshot() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
            SnapshotWriter writer = storage.create();
            try (OutputStream out = writer.addFile("state")) {
                out.write(1);
            }
            try (SnapshotReader reader = storage.open()) {
                assertEquals(5, reader.meta().getLastIncludedIndex());
            }
            writer.abort();
            try (SnapshotReader reader = storage.open()) {
                assertEquals(5, reader.meta().getLastIncludedIndex());
            }
            assertEquals(1, children().size(), children().toString());
        }
    }

    @Test
    void newSnapshotReplacesTheOldOneWhichIsDeletedOnceNoReaderHoldsIt() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
            SnapshotReader old = storage.open();
            save(storage, 9, 2);
            assertEquals(2, children().size(), "old snapshot kept while being read: " + children());
            assertArrayEquals(BIG, readAll(old, "blobs/big"));
            old.close();
            old.close();
            assertEquals(1, children().size(), children().toString());
            try (SnapshotReader reader = storage.open()) {
                assertEquals(9, reader.meta().getLastIncludedIndex());
            }
        }
    }

    @Test
    void partialSnapshotsAreRemovedAtStartUp() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
            SnapshotWriter writer = storage.create();
            writer.addFile("state").close();
            SnapshotReceiver receiver = storage.receive(meta(7, 1).toBuilder()
                    .addFiles(SnapshotFile.newBuilder().setName("x").setSize(10)).build());
            receiver.writeChunk("x", 0, ByteString.copyFrom(new byte[4]));
            // crash: neither committed nor aborted
        }
        assertEquals(3, children().size(), children().toString());
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir);
             SnapshotReader reader = storage.open()) {
            assertEquals(5, reader.meta().getLastIncludedIndex());
            assertEquals(1, children().size(), children().toString());
        }
    }

    @Test
    void receiverCopiesASnapshotChunkByChunk() throws IOException {
        Path leaderDir = dir.resolve("leader");
        Path followerDir = dir.resolve("follower");
        try (LocalSnapshotStorage leader = LocalSnapshotStorage.open(leaderDir);
             LocalSnapshotStorage follower = LocalSnapshotStorage.open(followerDir)) {
            save(leader, 100, 3);
            try (SnapshotReader source = leader.open()) {
                SnapshotReceiver receiver = follower.receive(source.meta());
                copy(source, receiver, 7000);
                try (SnapshotReader installed = receiver.complete()) {
                    assertEquals(source.meta(), installed.meta());
                    assertArrayEquals(BIG, readAll(installed, "blobs/big"));
                }
            }
            try (SnapshotReader reader = follower.open()) {
                assertEquals(100, reader.meta().getLastIncludedIndex());
            }
        }
    }

    @Test
    void interruptedTransferResumesAtTheNextOffset() throws IOException {
        try (LocalSnapshotStorage leader = LocalSnapshotStorage.open(dir.resolve("leader"));
             LocalSnapshotStorage follower = LocalSnapshotStorage.open(dir.resolve("follower"))) {
            save(leader, 100, 3);
            try (SnapshotReader source = leader.open()) {
                SnapshotReceiver first = follower.receive(source.meta());
                first.writeChunk("blobs/big", 0, source.readChunk("blobs/big", 0, 50_000));
                SnapshotReceiver resumed = follower.receive(source.meta());
                assertSame(first, resumed);
                assertEquals(50_000, resumed.nextOffset("blobs/big"));
                assertEquals(0, resumed.nextOffset("state"));
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> resumed.writeChunk("blobs/big", 0, source.readChunk("blobs/big", 0, 10)));
                assertTrue(e.getMessage().contains("next expected offset is 50000"), e.getMessage());
                copy(source, resumed, 64_000);
                resumed.complete().close();
            }
            try (SnapshotReader reader = follower.open()) {
                assertArrayEquals(BIG, readAll(reader, "blobs/big"));
            }
        }
    }

    @Test
    void receivingADifferentSnapshotAbandonsThePartialOne() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotMeta a = meta(7, 1).toBuilder().addFiles(SnapshotFile.newBuilder().setName("x").setSize(3)).build();
            SnapshotMeta b = meta(8, 1).toBuilder().addFiles(SnapshotFile.newBuilder().setName("x").setSize(3)).build();
            SnapshotReceiver ra = storage.receive(a);
            ra.writeChunk("x", 0, ByteString.copyFromUtf8("ab"));
            SnapshotReceiver rb = storage.receive(b);
            assertEquals(0, rb.nextOffset("x"));
            assertThrows(IllegalStateException.class, () -> ra.writeChunk("x", 2, ByteString.copyFromUtf8("c")));
            assertEquals(1, children().size(), children().toString());
        }
    }

    @Test
    void receiverRejectsBadChunksAndDetectsAChecksumMismatch() throws IOException {
        byte[] content = "hello".getBytes();
        SnapshotMeta m = meta(4, 1).toBuilder().addFiles(SnapshotFile.newBuilder().setName("f")
                .setSize(content.length).setCrc32C(DurableFiles.crc(content))).build();
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotReceiver r = storage.receive(m);
            assertThrows(IllegalArgumentException.class, () -> r.writeChunk("g", 0, ByteString.copyFromUtf8("x")));
            assertThrows(IllegalArgumentException.class, () -> r.writeChunk("f", 0, ByteString.copyFromUtf8("toolong")));
            r.writeChunk("f", 0, ByteString.copyFromUtf8("hellO"));
            LogCorruptionException e = assertThrows(LogCorruptionException.class, r::complete);
            assertTrue(e.getMessage().contains("does not match its meta"), e.getMessage());
            assertNull(storage.open(), "a snapshot failing verification is never published");

            SnapshotReceiver again = storage.receive(m);
            assertEquals(5, again.nextOffset("f"));
            again.abort();
            SnapshotReceiver fresh = storage.receive(m);
            fresh.writeChunk("f", 0, ByteString.copyFrom(content));
            fresh.complete().close();
            assertNotNull(storage.open());
        }
    }

    @Test
    void rejectsUnsafeFileNamesAndUnclosedFiles() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotWriter writer = storage.create();
            for (String bad : List.of("", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", SnapshotFiles.META_FILE, "a\\b")) {
                assertThrows(IllegalArgumentException.class, () -> writer.addFile(bad), bad);
            }
            writer.addFile("ok").write(1);
            assertThrows(IllegalArgumentException.class, () -> writer.addFile("ok"));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> writer.commit(meta(3, 1)));
            assertTrue(e.getMessage().contains("'ok' is still open"), e.getMessage());
            writer.abort();
            assertThrows(IllegalStateException.class, () -> writer.addFile("later"));
            assertThrows(IllegalArgumentException.class, () -> storage.create().commit(meta(0, 0)));
        }
    }

    @Test
    void removedSnapshotFileIsSetAsideAndReportedAtOpen() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
        }
        Path file = onlySnapshotDir().resolve("blobs/big");
        Files.delete(file);
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            String damage = storage.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains(file.toString()) && damage.contains("missing"), damage);
            assertNull(storage.open(), "a damaged snapshot is never returned");
        }
        assertEquals(1, damagedDirs().size(), "kept as evidence");
    }

    @Test
    void flippedByteInASnapshotFileIsSetAsideAndReportedAtOpen() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
        }
        Path file = onlySnapshotDir().resolve("blobs/big");
        byte[] all = Files.readAllBytes(file);
        all[12345] ^= 0x04;
        Files.write(file, all);
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            String damage = storage.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains(file.toString()) && damage.contains("checksum"), damage);
            assertNull(storage.open());
        }
        List<Path> damaged = damagedDirs();
        assertEquals(1, damaged.size());
        assertTrue(Files.exists(damaged.get(0).resolve("blobs/big")), "the damaged files are never deleted");
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            assertNull(storage.damageFoundAtOpen(), "reported once: the next open finds nothing damaged");
        }
    }

    @Test
    void flippedByteInASnapshotFileIsDetectedWhenRead() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
            assertNull(storage.damageFoundAtOpen());
            Path file = onlySnapshotDir().resolve("blobs/big");
            try (SnapshotReader reader = storage.open()) {
                byte[] all = Files.readAllBytes(file);
                all[12345] ^= 0x04;
                Files.write(file, all);
                LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> readAll(reader, "blobs/big"));
                assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("crc32c"), e.getMessage());
            }
        }
    }

    @Test
    void truncatedSnapshotMetaIsReported() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
        }
        Path meta = onlySnapshotDir().resolve(SnapshotFiles.META_FILE);
        byte[] all = Files.readAllBytes(meta);
        Files.write(meta, Arrays.copyOf(all, all.length / 2));
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            String damage = storage.damageFoundAtOpen();
            assertTrue(damage != null && damage.contains(meta.toString()) && damage.contains("truncated"), damage);
            assertNull(storage.open());
        }
    }

    @Test
    void aCorruptLatestSnapshotIsSetAsideAndTheOlderValidOneServes() throws IOException {
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            save(storage, 5, 1);
        }
        Path first = onlySnapshotDir();
        Path copy = dir.resolve("snapshot_00000000000000000009");
        Files.createDirectories(copy);
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            assertTrue(storage.damageFoundAtOpen().contains(copy.toAbsolutePath().toString()), storage.damageFoundAtOpen());
            assertTrue(Files.exists(first), "the older valid snapshot is kept");
            try (SnapshotReader reader = storage.open()) {
                assertEquals(5, reader.meta().getLastIncludedIndex());
            }
        }
        assertEquals(1, damagedDirs().size());
    }

    private List<Path> damagedDirs() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(LocalSnapshotStorage.DAMAGED_PREFIX)).toList();
        }
    }

    private Path onlySnapshotDir() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> all = s.toList();
            assertEquals(1, all.size(), all.toString());
            return all.get(0).toAbsolutePath();
        }
    }

    private static void copy(SnapshotReader source, SnapshotReceiver receiver, int chunk) throws IOException {
        for (SnapshotFile f : source.meta().getFilesList()) {
            long offset = receiver.nextOffset(f.getName());
            while (offset < f.getSize()) {
                ByteString data = source.readChunk(f.getName(), offset, chunk);
                receiver.writeChunk(f.getName(), offset, data);
                offset += data.size();
            }
        }
    }
}
