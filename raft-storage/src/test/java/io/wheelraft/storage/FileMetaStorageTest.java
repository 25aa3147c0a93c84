package io.wheelraft.storage;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.proto.RaftMetaRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FileMetaStorageTest {

    @TempDir
    Path dir;

    @Test
    void freshNodeHasTermZeroAndNoVote() {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(0, meta.term());
            assertNull(meta.votedFor());
        }
        assertFalse(Files.exists(dir.resolve(FileMetaStorage.FILE_NAME)), "reading creates no file");
    }

    @Test
    void termAndVoteSurviveReopen() {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(3, PeerId.parse("10.0.0.1:8080:2"));
            meta.setTermAndVote(7, PeerId.parse("10.0.0.2:8081"));
            meta.setTermAndVote(8, null);
            meta.setTermAndVote(9, PeerId.parse("host:1"));
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(9, meta.term());
            assertEquals(PeerId.parse("host:1"), meta.votedFor());
            meta.setTermAndVote(10, null);
        }
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(10, meta.term());
            assertNull(meta.votedFor());
        }
    }

    @Test
    void leftoverTempFileFromACrashIsIgnored() throws Exception {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(4, PeerId.parse("a:1"));
        }
        Files.write(dir.resolve(FileMetaStorage.FILE_NAME + ".tmp"), new byte[] {1, 2, 3});
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertEquals(4, meta.term());
        }
        assertFalse(Files.exists(dir.resolve(FileMetaStorage.FILE_NAME + ".tmp")));
    }

    @Test
    void truncatedMetaFileIsReportedNotResetToZero() throws Exception {
        Path file = writeTerm(5);
        byte[] all = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(all, all.length - 3));
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());

        Files.write(file, Arrays.copyOf(all, 5));
        e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void flippedByteInTheOnlyRecordFailsTheChecksum() throws Exception {
        Path file = writeTerm(5); // the first write: slot A holds the record, slot B was never written
        byte[] all = Files.readAllBytes(file);
        all[30] ^= 0x40;
        Files.write(file, all);
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("checksum"), e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void unknownFormatVersionIsRefused() throws Exception {
        Path file = dir.resolve(FileMetaStorage.FILE_NAME);
        DurableFiles.writeAtomically(file, FileMetaStorage.MAGIC,
                RaftMetaRecord.newBuilder().setFormatVersion(2).setTerm(1).build().toByteArray());
        LogCorruptionException e = assertThrows(LogCorruptionException.class, () -> FileMetaStorage.open(dir));
        assertTrue(e.getMessage().contains("format version 2"), e.getMessage());
    }

    @Test
    void rejectsNegativeTerm() {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            assertThrows(IllegalArgumentException.class, () -> meta.setTermAndVote(-1, null));
        }
    }

    private Path writeTerm(long term) {
        try (FileMetaStorage meta = FileMetaStorage.open(dir)) {
            meta.setTermAndVote(term, PeerId.parse("a:1"));
            return meta.file();
        }
    }
}
