package io.wheelraft.core.storage.memory;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryMetaStorageTest {

    private static final PeerId A = PeerId.parse("a:1");
    private static final PeerId B = PeerId.parse("b:1");

    private final MemoryMetaStorage meta = new MemoryMetaStorage();

    @Test
    void freshStorageHasTermZeroAndNoVote() {
        assertEquals(0, meta.term());
        assertNull(meta.votedFor());
    }

    @Test
    void recordsTermAndVoteTogether() {
        meta.setTermAndVote(3, null);
        meta.setTermAndVote(3, A);
        assertEquals(3, meta.term());
        assertEquals(A, meta.votedFor());
        meta.setTermAndVote(3, A);
        meta.setTermAndVote(5, B);
        assertEquals(5, meta.term());
        assertEquals(B, meta.votedFor());
        assertEquals("term=5 votedFor=b:1", meta.toString());
    }

    @Test
    void termNeverGoesBackwards() {
        meta.setTermAndVote(4, null);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> meta.setTermAndVote(3, A));
        assertTrue(e.getMessage().contains("4") && e.getMessage().contains("3"), e.getMessage());
        assertEquals(4, meta.term());
        assertNull(meta.votedFor());
    }

    @Test
    void voteOfATermCannotChangeOrBeWithdrawn() {
        meta.setTermAndVote(2, A);
        assertThrows(IllegalArgumentException.class, () -> meta.setTermAndVote(2, B));
        assertThrows(IllegalArgumentException.class, () -> meta.setTermAndVote(2, null));
        assertEquals(A, meta.votedFor());
    }

    @Test
    void injectedFailureLeavesTheOldTermAndVote() {
        meta.setTermAndVote(1, A);
        meta.faults().failNextWrite(new StorageException("fsync failed"));
        assertThrows(StorageException.class, () -> meta.setTermAndVote(2, B));
        assertEquals(1, meta.term());
        assertEquals(A, meta.votedFor());
        meta.setTermAndVote(2, B);
        assertEquals(B, meta.votedFor());
    }

    @Test
    void survivesCloseAndReopen() {
        meta.setTermAndVote(7, B);
        meta.close();
        assertThrows(StorageException.class, meta::term);
        assertThrows(StorageException.class, () -> meta.setTermAndVote(8, null));
        meta.reopen();
        assertEquals(7, meta.term());
        assertEquals(B, meta.votedFor());
    }
}
