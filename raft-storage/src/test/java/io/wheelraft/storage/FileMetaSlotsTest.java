package io.wheelraft.storage;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.RaftMetaRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The two-slot layout of {@link FileMetaStorage}: slot choice, torn slots, and the version-1 conversion. */
class FileMetaSlotsTest {

    private static final int SLOT = MetaSlots.SLOT_SIZE;

    @TempDir
    Path dir;

    private Path file() {
        return dir.toAbsolutePath().normalize().resolve(FileMetaStorage.FILE_NAME);
    }

    @Test
    void theFileHasAFixedSizeAndEachWriteGoesToTheSlotNotHoldingTheNewestRecord() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(1, PeerId.parse("a:1"));
            byte[] before = Files.readAllBytes(file());
            assertEquals(MetaSlots.FILE_SIZE, before.length);
            assertTrue(isZero(slot(before, 1)), "slot B is empty after the first write");
            for (int term = 2; term <= 7; term++) {
                int target = term % 2 == 0 ? 1 : 0; // B, A, B, ...
                meta.setTermAndVote(term, term % 3 == 0 ? null : PeerId.parse("h" + term + ":9"));
                byte[] after = Files.readAllBytes(file());
                assertEquals(MetaSlots.FILE_SIZE, after.length, "the size never changes");
                assertArrayEquals(slot(before, 1 - target), slot(after, 1 - target),
                        "term " + term + " leaves the slot holding the previous record untouched");
                assertFalse(Arrays.equals(slot(before, target), slot(after, target)), "term " + term + " writes the other slot");
                before = after;
            }
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(7, meta.term());
            assertEquals(PeerId.parse("h7:9"), meta.votedFor());
            meta.setTermAndVote(8, null); // the newest is in slot A (term 7), so this goes to B
        }
        assertEquals(8, termInSlot(1));
        assertEquals(7, termInSlot(0));
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(8, meta.term());
            assertNull(meta.votedFor());
        }
    }

    @Test
    void aTornNewestSlotFallsBackToThePreviousRecord() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(3, PeerId.parse("a:1")); // slot A
            meta.setTermAndVote(4, PeerId.parse("b:2")); // slot B
        }
        // A crash in the middle of writing slot B: its first half new, its second half stale.
        byte[] all = Files.readAllBytes(file());
        Arrays.fill(all, SLOT + SLOT / 2, 2 * SLOT, (byte) 0x5A);
        Files.write(file(), all);
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(3, meta.term(), "the record durable before the torn write started");
            assertEquals(PeerId.parse("a:1"), meta.votedFor());
            meta.setTermAndVote(5, PeerId.parse("c:3")); // rewrites the torn slot B, slot A untouched
        }
        assertEquals(5, termInSlot(1));
        assertEquals(3, termInSlot(0));
        FileMetaStorage.OfflineView view = FileMetaStorage.readOffline(dir);
        assertEquals(5, view.term());
        assertEquals("c:3", view.votedFor());
    }

    @Test
    void aDamagedOlderSlotDoesNotHideTheNewest() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(3, PeerId.parse("a:1")); // slot A
            meta.setTermAndVote(4, PeerId.parse("b:2")); // slot B
        }
        DiskBytes.flip(file(), 40);
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(4, meta.term());
        }
    }

    @Test
    void bothSlotsDamagedIsReportedNamingTheFileAndEachSlot() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(3, PeerId.parse("a:1"));
            meta.setTermAndVote(4, PeerId.parse("b:2"));
        }
        DiskBytes.flip(file(), 40);
        DiskBytes.flip(file(), 0);
        DiskBytes.flip(file(), SLOT + 40);
        for (var read : new Runnable[] {() -> FileMetaStorage.open(dir), () -> FileMetaStorage.readOffline(dir)}) {
            LogCorruptionException e = assertThrows(LogCorruptionException.class, read::run);
            assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
            assertTrue(e.getMessage().contains("slot A: bad magic"), e.getMessage());
            assertTrue(e.getMessage().contains("slot B: fails its checksum"), e.getMessage());
            assertTrue(e.getMessage().contains("never read as term 0"), e.getMessage());
        }
    }

    @Test
    void anAllZeroFileIsDamageNotAFreshNode() throws Exception {
        Files.write(file(), new byte[MetaSlots.FILE_SIZE]);
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("slot A: empty"), e.getMessage());
        assertTrue(e.getMessage().contains("slot B: empty"), e.getMessage());
    }

    @Test
    void aSlotThatPassesItsChecksumWithAnUnknownLayoutVersionIsRefusedNotSkipped() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(3, PeerId.parse("a:1"));
            meta.setTermAndVote(4, PeerId.parse("b:2"));
        }
        // Slot B rewritten, checksum and all, by a hypothetical newer layout: skipping it would forget its vote.
        byte[] all = Files.readAllBytes(file());
        ByteBuffer b = MetaSlots.encode(3, RaftMetaRecord.newBuilder().setFormatVersion(1).setTerm(9).build().toByteArray());
        b.putInt(4, 3);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(b.array(), 0, SLOT - 4);
        b.putInt(SLOT - 4, (int) crc.getValue());
        System.arraycopy(b.array(), 0, all, SLOT, SLOT);
        Files.write(file(), all);
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("slot B has layout version 3"), e.getMessage());
    }

    @Test
    void aVersionOneFileOpensAndIsConvertedDurably() throws Exception {
        writeVersionOne(RaftMetaRecord.newBuilder().setFormatVersion(1).setTerm(12).setVotedFor("10.0.0.2:8081").build());
        FileMetaStorage.OfflineView offline = FileMetaStorage.readOffline(dir);
        assertEquals(12, offline.term());
        assertEquals("10.0.0.2:8081", offline.votedFor());
        assertTrue(Files.size(file()) < MetaSlots.FILE_SIZE, "readOffline converts nothing");

        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(12, meta.term());
            assertEquals(PeerId.parse("10.0.0.2:8081"), meta.votedFor());
            assertEquals(MetaSlots.FILE_SIZE, Files.size(file()), "converted at open, before any write");
            assertEquals(12, termInSlot(0));
            meta.setTermAndVote(13, null);
        }
        assertFalse(Files.exists(file().resolveSibling(FileMetaStorage.FILE_NAME + DurableFiles.TEMP_SUFFIX)));
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(13, meta.term());
            assertNull(meta.votedFor());
        }
        assertEquals(13, FileMetaStorage.readOffline(dir).term());
    }

    @Test
    void aVersionOneFileWithTheRepairingFlagKeepsIt() throws Exception {
        writeVersionOne(RaftMetaRecord.newBuilder().setFormatVersion(1).setTerm(2).setRepairing(true).build());
        assertTrue(FileMetaStorage.readOffline(dir).repairing());
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertTrue(meta.repairing());
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertTrue(meta.repairing(), "still fenced after the conversion");
            meta.setRepairing(false);
        }
        assertFalse(FileMetaStorage.readOffline(dir).repairing());
    }

    @Test
    void aDamagedVersionOneFileIsReportedAndNotConverted() throws Exception {
        writeVersionOne(RaftMetaRecord.newBuilder().setFormatVersion(1).setTerm(12).setVotedFor("a:1").build());
        byte[] before = Files.readAllBytes(file());
        DiskBytes.flip(file(), before.length - 1);
        byte[] damaged = Files.readAllBytes(file());
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("checksum"), e.getMessage());
        assertThrows(LogCorruptionException.class, () -> FileMetaStorage.readOffline(dir));
        assertArrayEquals(damaged, Files.readAllBytes(file()), "left as found for the operator");
    }

    @Test
    void aRecordThatCannotFitInASlotIsRefusedWithoutChangingAnything() {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(2, PeerId.parse("a:1"));
            PeerId huge = new PeerId("h".repeat(MetaSlots.MAX_PAYLOAD), 1, 0);
            StorageException e = assertThrows(StorageException.class, () -> meta.setTermAndVote(3, huge));
            assertTrue(e.getMessage().contains("more than a meta slot holds"), e.getMessage());
            assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
            assertEquals(2, meta.term());
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(2, meta.term());
        }
    }

    @Test
    void aFailedWriteIsAStorageExceptionLeavesTheStateAndTheNextWriteWorks() {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(2, PeerId.parse("a:1"));
            meta.setTermAndVote(3, PeerId.parse("a:1"));
            // An interrupt makes the channel's write fail with ClosedByInterruptException (an IOException).
            Thread.currentThread().interrupt();
            StorageException e;
            try {
                e = assertThrows(StorageException.class, () -> meta.setTermAndVote(4, PeerId.parse("b:2")));
            } finally {
                Thread.interrupted();
            }
            assertTrue(e.getMessage().contains("cannot persist term 4"), e.getMessage());
            assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
            assertEquals(3, meta.term(), "the failed value is never used");
            meta.setTermAndVote(5, PeerId.parse("c:3"));
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(5, meta.term());
            assertEquals(PeerId.parse("c:3"), meta.votedFor());
        }
    }

    @Test
    void aTwoSlotFileOfTheWrongSizeIsReportedAsTruncated() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(2, PeerId.parse("a:1"));
            meta.setTermAndVote(3, PeerId.parse("a:1"));
        }
        byte[] all = Files.readAllBytes(file());
        Files.write(file(), Arrays.copyOf(all, SLOT + 100));
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.readOffline(dir));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(MetaSlots.FILE_SIZE)), e.getMessage());
    }

    private void writeVersionOne(RaftMetaRecord record) throws Exception {
        Files.createDirectories(dir);
        DurableFiles.writeAtomically(file(), FileMetaStorage.MAGIC, record.toByteArray());
        assertNotNull(DurableFiles.readVerified(file(), FileMetaStorage.MAGIC));
    }

    private long termInSlot(int index) throws Exception {
        byte[] s = slot(Files.readAllBytes(file()), index);
        int length = ByteBuffer.wrap(s).getInt(16);
        return RaftMetaRecord.parseFrom(Arrays.copyOfRange(s, 20, 20 + length)).getTerm();
    }

    private static byte[] slot(byte[] all, int index) {
        return Arrays.copyOfRange(all, index * SLOT, (index + 1) * SLOT);
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** Flips one byte of a file in place. */
    private static final class DiskBytes {
        static void flip(Path file, int offset) throws Exception {
            byte[] all = Files.readAllBytes(file);
            all[offset] ^= (byte) 0xA5;
            Files.write(file, all);
        }
    }
}
