package io.wheelraft.core.storage.memory;

import com.google.protobuf.ByteString;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemorySnapshotStorageTest {

    private final MemorySnapshotStorage storage = new MemorySnapshotStorage();

    private static SnapshotMeta meta(long index, long term) {
        return SnapshotMeta.newBuilder().setLastIncludedIndex(index).setLastIncludedTerm(term)
                .setConfiguration(ConfigurationEntry.newBuilder().addPeers("a:1").addPeers("b:1")).build();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] random(int size, long seed) {
        byte[] out = new byte[size];
        new Random(seed).nextBytes(out);
        return out;
    }

    private SnapshotMeta save(long index, String name, byte[] content) throws IOException {
        SnapshotWriter writer = storage.create();
        try (OutputStream out = writer.addFile(name)) {
            out.write(content);
        }
        return writer.commit(meta(index, 1));
    }

    private static byte[] readAll(SnapshotReader reader, String name) throws IOException {
        try (InputStream in = reader.openFile(name)) {
            return in.readAllBytes();
        }
    }

    @Test
    void emptyStorageHasNoSnapshot() {
        assertNull(storage.open());
    }

    @Test
    void committedSnapshotIsReadableWithSizesAndChecksumsInItsMeta() throws IOException {
        SnapshotWriter writer = storage.create();
        try (OutputStream out = writer.addFile("data")) {
            out.write(bytes("hello"));
        }
        try (OutputStream out = writer.addFile("sub/dir/extra.bin")) {
            out.write(bytes(""));
        }
        assertNull(storage.open(), "not visible before commit");
        SnapshotMeta stored = writer.commit(meta(10, 2).toBuilder()
                .addFiles(SnapshotFile.newBuilder().setName("bogus").setSize(99)).build());

        assertEquals(10, stored.getLastIncludedIndex());
        assertEquals(2, stored.getLastIncludedTerm());
        assertEquals(2, stored.getFilesCount(), "the storage replaces any caller-supplied file list");
        SnapshotFile data = stored.getFiles(0);
        assertEquals("data", data.getName());
        assertEquals(5, data.getSize());
        CRC32C crc = new CRC32C();
        crc.update(bytes("hello"));
        assertEquals((int) crc.getValue(), data.getCrc32C());
        assertEquals(0, stored.getFiles(1).getSize());

        try (SnapshotReader reader = storage.open()) {
            assertEquals(stored, reader.meta());
            assertArrayEquals(bytes("hello"), readAll(reader, "data"));
            assertArrayEquals(new byte[0], readAll(reader, "sub/dir/extra.bin"));
        }
    }

    @Test
    void abortedWriteLeavesThePreviousSnapshot() throws IOException {
        save(5, "data", bytes("v1"));
        SnapshotWriter writer = storage.create();
        OutputStream out = writer.addFile("data");
        out.write(bytes("v2"));
        writer.abort();
        assertThrows(IOException.class, () -> out.write(1));
        assertThrows(IOException.class, () -> writer.commit(meta(6, 1)));
        try (SnapshotReader reader = storage.open()) {
            assertEquals(5, reader.meta().getLastIncludedIndex());
            assertArrayEquals(bytes("v1"), readAll(reader, "data"));
        }
    }

    @Test
    void writesAfterCommitAreRefusedAndDoNotChangeTheSnapshot() throws IOException {
        SnapshotWriter writer = storage.create();
        OutputStream out = writer.addFile("data");
        out.write(bytes("abc"));
        writer.commit(meta(3, 1));
        assertThrows(IOException.class, () -> out.write(bytes("def")));
        assertThrows(IOException.class, () -> writer.addFile("more"));
        try (SnapshotReader reader = storage.open()) {
            assertArrayEquals(bytes("abc"), readAll(reader, "data"));
        }
    }

    @Test
    void badFileNamesAreRejected() {
        SnapshotWriter writer = storage.create();
        for (String bad : new String[] {"", "/etc/passwd", "..", "../x", "a/../b", "a//b", "a/", "./a", "a\\b"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> writer.addFile(bad), bad);
            assertTrue(bad.isEmpty() || e.getMessage().contains(bad), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> writer.addFile(null));
    }

    @Test
    void sameFileAddedTwiceIsRejected() throws IOException {
        SnapshotWriter writer = storage.create();
        writer.addFile("data");
        assertThrows(IllegalArgumentException.class, () -> writer.addFile("data"));
    }

    @Test
    void newerSnapshotReplacesOlderButOpenReadersKeepTheirs() throws IOException {
        save(5, "data", bytes("old"));
        SnapshotReader old = storage.open();
        save(9, "data", bytes("new"));
        assertArrayEquals(bytes("old"), readAll(old, "data"));
        old.close();
        try (SnapshotReader reader = storage.open()) {
            assertEquals(9, reader.meta().getLastIncludedIndex());
            assertArrayEquals(bytes("new"), readAll(reader, "data"));
        }
    }

    @Test
    void olderSnapshotNeverReplacesANewerOne() throws IOException {
        save(9, "data", bytes("new"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> save(5, "data", bytes("old")));
        assertTrue(e.getMessage().contains("5") && e.getMessage().contains("9"), e.getMessage());
        try (SnapshotReader reader = storage.open()) {
            assertEquals(9, reader.meta().getLastIncludedIndex());
        }
    }

    @Test
    void readChunkServesByteRangesAndEmptyAtTheEnd() throws IOException {
        byte[] content = random(1000, 1);
        save(1, "data", content);
        try (SnapshotReader reader = storage.open()) {
            ByteArrayOutputStream copy = new ByteArrayOutputStream();
            long offset = 0;
            while (true) {
                ByteString chunk = reader.readChunk("data", offset, 300);
                if (chunk.isEmpty()) {
                    break;
                }
                assertTrue(chunk.size() <= 300);
                chunk.writeTo(copy);
                offset += chunk.size();
            }
            assertArrayEquals(content, copy.toByteArray());
            assertEquals(100, reader.readChunk("data", 900, 300).size());
            assertThrows(IllegalArgumentException.class, () -> reader.readChunk("data", 1001, 10));
            assertThrows(IllegalArgumentException.class, () -> reader.readChunk("data", -1, 10));
            assertThrows(IllegalArgumentException.class, () -> reader.readChunk("data", 0, 0));
            FileNotFoundException missing = assertThrows(FileNotFoundException.class, () -> reader.readChunk("nope", 0, 10));
            assertTrue(missing.getMessage().contains("nope"), missing.getMessage());
            assertThrows(FileNotFoundException.class, () -> reader.openFile("nope"));
        }
    }

    @Test
    void closedReaderRefusesReads() throws IOException {
        save(1, "data", bytes("x"));
        SnapshotReader reader = storage.open();
        reader.close();
        assertThrows(IOException.class, () -> reader.readChunk("data", 0, 1));
    }

    /** Copies the latest snapshot of {@code source} into {@code target} by chunks, as InstallSnapshot does. */
    private static SnapshotReader copy(MemorySnapshotStorage source, MemorySnapshotStorage target, int chunkSize)
            throws IOException {
        try (SnapshotReader reader = source.open()) {
            SnapshotReceiver receiver = target.receive(reader.meta());
            for (SnapshotFile f : reader.meta().getFilesList()) {
                long offset = receiver.nextOffset(f.getName());
                while (true) {
                    ByteString chunk = reader.readChunk(f.getName(), offset, chunkSize);
                    if (chunk.isEmpty()) {
                        break;
                    }
                    receiver.writeChunk(f.getName(), offset, chunk);
                    offset += chunk.size();
                }
            }
            return receiver.complete();
        }
    }

    @Test
    void receivedSnapshotBecomesVisibleOnlyWhenComplete() throws IOException {
        MemorySnapshotStorage leader = new MemorySnapshotStorage();
        SnapshotWriter writer = leader.create();
        writer.addFile("a").write(random(5000, 2));
        writer.addFile("b/c").write(random(17, 3));
        writer.addFile("empty");
        SnapshotMeta meta = writer.commit(meta(42, 3));

        SnapshotReceiver receiver = storage.receive(meta);
        try (SnapshotReader source = leader.open()) {
            receiver.writeChunk("a", 0, source.readChunk("a", 0, 1000));
            assertNull(storage.open(), "partly received snapshot is not visible");
        }
        receiver.abort();
        assertNull(storage.open());

        try (SnapshotReader copy = copy(leader, storage, 700); SnapshotReader opened = storage.open()) {
            assertEquals(meta, copy.meta());
            assertEquals(meta, opened.meta());
            try (SnapshotReader source = leader.open()) {
                for (SnapshotFile f : meta.getFilesList()) {
                    assertArrayEquals(readAll(source, f.getName()), readAll(opened, f.getName()));
                }
            }
        }
    }

    @Test
    void transferResumesAfterADroppedChunk() throws IOException {
        byte[] content = random(3000, 4);
        MemorySnapshotStorage leader = new MemorySnapshotStorage();
        SnapshotWriter writer = leader.create();
        writer.addFile("data").write(content);
        SnapshotMeta meta = writer.commit(meta(7, 1));

        SnapshotReceiver receiver = storage.receive(meta);
        receiver.writeChunk("data", 0, ByteString.copyFrom(content, 0, 1000));
        // The chunk at 1000 is lost; the next one arrives and is refused, naming where to resume.
        IllegalArgumentException gap = assertThrows(IllegalArgumentException.class,
                () -> receiver.writeChunk("data", 2000, ByteString.copyFrom(content, 2000, 1000)));
        assertTrue(gap.getMessage().contains("2000") && gap.getMessage().contains("1000"), gap.getMessage());
        // A repeated chunk is refused the same way.
        assertThrows(IllegalArgumentException.class,
                () -> receiver.writeChunk("data", 0, ByteString.copyFrom(content, 0, 1000)));

        // The leader restarts the transfer: the storage hands back the same receiver, which resumes.
        SnapshotReceiver resumed = storage.receive(meta);
        assertSame(receiver, resumed);
        assertEquals(1000, resumed.nextOffset("data"));
        resumed.writeChunk("data", 1000, ByteString.copyFrom(content, 1000, 2000));
        try (SnapshotReader reader = resumed.complete()) {
            assertArrayEquals(content, readAll(reader, "data"));
        }
        assertThrows(IllegalStateException.class, () -> resumed.nextOffset("data"));
    }

    @Test
    void receivingADifferentSnapshotStartsOver() throws IOException {
        byte[] content = bytes("0123456789");
        SnapshotMeta first = meta(7, 1).toBuilder()
                .addFiles(StoredSnapshot.describe("data", content)).build();
        SnapshotMeta second = first.toBuilder().setLastIncludedIndex(8).build();
        SnapshotReceiver a = storage.receive(first);
        a.writeChunk("data", 0, ByteString.copyFrom(content, 0, 4));
        SnapshotReceiver b = storage.receive(second);
        assertEquals(0, b.nextOffset("data"));
        assertEquals(0, storage.receive(second).nextOffset("data"));
    }

    @Test
    void corruptedChunkIsDetectedOnCompleteNamingTheFile() throws IOException {
        byte[] content = random(2000, 5);
        SnapshotMeta meta = meta(7, 1).toBuilder().addFiles(StoredSnapshot.describe("state/data.bin", content)).build();
        SnapshotReceiver receiver = storage.receive(meta);
        byte[] flipped = content.clone();
        flipped[1234] ^= 0x10;
        receiver.writeChunk("state/data.bin", 0, ByteString.copyFrom(flipped, 0, 1500));
        receiver.writeChunk("state/data.bin", 1500, ByteString.copyFrom(flipped, 1500, 500));
        LogCorruptionException e = assertThrows(LogCorruptionException.class, receiver::complete);
        assertTrue(e.getMessage().contains("state/data.bin") && e.getMessage().contains("CRC32C"), e.getMessage());
        assertNull(storage.open(), "a corrupt snapshot is never published");
        assertEquals(0, storage.receive(meta).nextOffset("state/data.bin"), "the next attempt starts over");
    }

    @Test
    void missingBytesAreDetectedOnComplete() throws IOException {
        byte[] content = random(100, 6);
        SnapshotMeta meta = meta(7, 1).toBuilder().addFiles(StoredSnapshot.describe("data", content)).build();
        SnapshotReceiver receiver = storage.receive(meta);
        receiver.writeChunk("data", 0, ByteString.copyFrom(content, 0, 60));
        LogCorruptionException e = assertThrows(LogCorruptionException.class, receiver::complete);
        assertTrue(e.getMessage().contains("'data' has 60 bytes") && e.getMessage().contains("100"), e.getMessage());
    }

    @Test
    void chunkPastTheDeclaredSizeIsRejected() throws IOException {
        SnapshotMeta meta = meta(7, 1).toBuilder().addFiles(StoredSnapshot.describe("data", bytes("abc"))).build();
        SnapshotReceiver receiver = storage.receive(meta);
        assertThrows(LogCorruptionException.class, () -> receiver.writeChunk("data", 0, ByteString.copyFromUtf8("abcd")));
        assertEquals(0, receiver.nextOffset("data"));
    }

    @Test
    void chunkOfAFileNotInTheMetaIsRejected() {
        SnapshotReceiver receiver = storage.receive(meta(7, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> receiver.writeChunk("other", 0, ByteString.copyFromUtf8("x")));
        assertTrue(e.getMessage().contains("other"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> receiver.nextOffset("other"));
    }

    @Test
    void metaWithBadOrRepeatedFileNamesIsRejected() {
        SnapshotFile ok = SnapshotFile.newBuilder().setName("data").build();
        assertThrows(IllegalArgumentException.class,
                () -> storage.receive(meta(1, 1).toBuilder().addFiles(ok.toBuilder().setName("../x")).build()));
        assertThrows(IllegalArgumentException.class,
                () -> storage.receive(meta(1, 1).toBuilder().addFiles(ok).addFiles(ok).build()));
    }

    @Test
    void injectedFailuresLeaveNothingHalfWritten() throws IOException {
        save(1, "data", bytes("v1"));
        storage.faults().failNextWrite(new StorageException("disk full"));
        assertThrows(StorageException.class, () -> save(2, "data", bytes("v2")));
        try (SnapshotReader reader = storage.open()) {
            assertEquals(1, reader.meta().getLastIncludedIndex());
        }

        byte[] content = bytes("payload");
        SnapshotMeta meta = meta(3, 1).toBuilder().addFiles(StoredSnapshot.describe("data", content)).build();
        SnapshotReceiver receiver = storage.receive(meta);
        storage.faults().failNextWrite(new StorageException("io error"));
        assertThrows(StorageException.class, () -> receiver.writeChunk("data", 0, ByteString.copyFrom(content)));
        assertEquals(0, receiver.nextOffset("data"));
        receiver.writeChunk("data", 0, ByteString.copyFrom(content));
        storage.faults().failNextWrite(new StorageException("io error"));
        assertThrows(StorageException.class, receiver::complete);
        try (SnapshotReader reader = receiver.complete()) {
            assertEquals(3, reader.meta().getLastIncludedIndex());
        }
    }

    @Test
    void closedStorageRefusesCallsUntilReopenedWithItsSnapshot() throws IOException {
        save(4, "data", bytes("x"));
        storage.close();
        assertThrows(StorageException.class, storage::open);
        assertThrows(StorageException.class, storage::create);
        storage.reopen();
        try (SnapshotReader reader = storage.open()) {
            assertNotNull(reader);
            assertEquals(4, reader.meta().getLastIncludedIndex());
        }
    }
}
