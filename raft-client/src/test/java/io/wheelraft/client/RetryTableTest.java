package io.wheelraft.client;

import io.wheelraft.client.proto.SessionCommand;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryTableTest {

    private static SessionCommand cmd(String client, long seq, long firstUnacked, long timeMs) {
        return SessionCommand.newBuilder().setFormatVersion(1).setClientId(client).setSequence(seq)
                .setFirstUnacked(firstUnacked).setLeaderTimeMs(timeMs).build();
    }

    @Test
    void retryOfAnAppliedCommandGetsItsFirstAnswer() {
        RetryTable t = new RetryTable(60_000, 10, 100);
        assertEquals(RetryTable.Kind.NEW, t.check(cmd("a", 1, 1, 1000)).kind());
        t.record("a", 1, new byte[] {7}, 42);
        RetryTable.Verdict again = t.check(cmd("a", 1, 1, 1001));
        assertEquals(RetryTable.Kind.DUPLICATE, again.kind());
        assertArrayEquals(new byte[] {7}, again.result());
        assertEquals(42, again.index());
    }

    @Test
    void acknowledgedAnswersAreForgottenAndTheirRetriesAreStale() {
        RetryTable t = new RetryTable(60_000, 10, 100);
        t.check(cmd("a", 1, 1, 1000));
        t.record("a", 1, new byte[0], 1);
        assertEquals(RetryTable.Kind.NEW, t.check(cmd("a", 2, 2, 1000)).kind());
        assertEquals(RetryTable.Kind.STALE, t.check(cmd("a", 1, 1, 1000)).kind());
    }

    @Test
    void idleSessionsExpireByTheLeaderTimeCarriedInTheLog() {
        RetryTable t = new RetryTable(1000, 10, 100);
        t.check(cmd("a", 1, 1, 1000));
        t.record("a", 1, new byte[0], 1);
        t.check(cmd("b", 1, 1, 1900));
        assertTrue(t.knows("a"), "900 ms idle is within the expiry");
        t.check(cmd("b", 2, 1, 2001));
        assertFalse(t.knows("a"), "1001 ms idle is past it");
        assertEquals(1, t.expired());
        // A leader whose clock is behind does not move time backwards.
        t.check(cmd("c", 1, 1, 5));
        assertTrue(t.knows("b"));
    }

    @Test
    void tableIsBoundedByEvictingTheClientIdleLongest() {
        RetryTable t = new RetryTable(60_000, 2, 100);
        t.check(cmd("a", 1, 1, 1));
        t.check(cmd("b", 1, 1, 2));
        t.check(cmd("a", 2, 1, 3));
        t.check(cmd("c", 1, 1, 4));
        assertFalse(t.knows("b"));
        assertTrue(t.knows("a"));
        assertEquals(1, t.evicted());
    }

    @Test
    void tooManyUnacknowledgedAnswersRaiseTheFloorInsteadOfAllowingAReapply() {
        RetryTable t = new RetryTable(60_000, 10, 2);
        for (long s = 1; s <= 3; s++) {
            t.check(cmd("a", s, 1, 1));
            t.record("a", s, new byte[0], s);
        }
        assertEquals(RetryTable.Kind.STALE, t.check(cmd("a", 1, 1, 1)).kind());
        assertEquals(RetryTable.Kind.DUPLICATE, t.check(cmd("a", 3, 1, 1)).kind());
    }

    @Test
    void snapshotRoundTripKeepsAnswersClockAndOrder() {
        RetryTable t = new RetryTable(1000, 10, 100);
        t.check(cmd("a", 1, 1, 1000));
        t.record("a", 1, new byte[] {1}, 5);
        t.check(cmd("b", 1, 1, 1500));
        RetryTable copy = new RetryTable(1000, 10, 100);
        copy.load(t.toSnapshot());
        assertEquals(RetryTable.Kind.DUPLICATE, copy.check(cmd("a", 1, 1, 1600)).kind());
        copy.check(cmd("b", 2, 1, 2601));
        assertFalse(copy.knows("a"), "the loaded clock and activity times expire a as the original would");
    }
}
