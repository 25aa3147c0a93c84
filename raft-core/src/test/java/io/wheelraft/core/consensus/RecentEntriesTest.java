package io.wheelraft.core.consensus;

import com.google.protobuf.ByteString;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RecentEntriesTest {

    private static LogEntry entry(long index, long term, int bytes) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFrom(new byte[bytes])).build();
    }

    @Test
    void capacityIsRoundedUpToAPowerOfTwo() {
        assertEquals(8, new RecentEntries(5, 10).capacity());
        assertEquals(1, new RecentEntries(1, 10).capacity());
        assertEquals(0, RecentEntries.none().capacity());
        assertThrows(IllegalArgumentException.class, () -> new RecentEntries(-1, 10));
    }

    @Test
    void aSlotAnswersOnlyForTheIndexItHolds() {
        RecentEntries r = new RecentEntries(4, 100);
        LogEntry one = entry(1, 1, 1);
        r.put(one);
        assertSame(one, r.get(1));
        assertNull(r.get(5), "same slot, other index");
        LogEntry five = entry(5, 1, 1);
        r.put(five); // pushes index 1 out
        assertNull(r.get(1));
        assertSame(five, r.get(5));
    }

    @Test
    void largeEntriesAreNotKeptAndNothingIsKeptWhenDisabled() {
        RecentEntries r = new RecentEntries(4, 100);
        r.put(entry(2, 1, 101));
        assertNull(r.get(2));
        RecentEntries none = RecentEntries.none();
        none.put(entry(1, 1, 1));
        assertNull(none.get(1));
    }

    @Test
    void invalidateForgetsOnlyTheRangeAndClearForgetsAll() {
        RecentEntries r = new RecentEntries(8, 100);
        for (long i = 1; i <= 8; i++) {
            r.put(entry(i, 1, 1));
        }
        r.invalidate(3, 5);
        assertNull(r.get(3));
        assertNull(r.get(5));
        assertEquals(2, r.get(2).getIndex());
        assertEquals(6, r.get(6).getIndex());
        r.invalidate(7, 1_000_000); // wider than the ring: stays bounded
        assertNull(r.get(8));
        r.clear();
        assertNull(r.get(1));
    }

    @Test
    void releaseDropsTheRingUntilTheNextPut() {
        RecentEntries r = new RecentEntries(4, 100);
        assertFalse(r.holdsRing(), "allocated on first use only");
        r.put(entry(1, 1, 1));
        assertTrue(r.holdsRing());
        r.release();
        assertFalse(r.holdsRing());
        assertNull(r.get(1), "a released ring answers nothing: reads go to storage");
        LogEntry two = entry(2, 1, 1);
        r.put(two);
        assertTrue(r.holdsRing());
        assertSame(two, r.get(2));
        assertNull(r.get(1), "the new ring does not bring back what the old one held");
    }
}
