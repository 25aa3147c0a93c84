package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AckCountTest {

    private static final long LEASE_END = 1_000_000_000L;

    @Test
    void anAnswerToAnIncrementInvokedAfterTheLeaseCountsWheneverItArrives() {
        LoadGenerator.AckCount c = new LoadGenerator.AckCount("10.77.1.1:7001", LEASE_END, Long.MIN_VALUE / 2);
        assertTrue(c.counts("10.77.1.1:7001", LEASE_END + 1, LEASE_END + 2));
        assertTrue(c.counts("10.77.1.1:7001", LEASE_END + 1, LEASE_END + 5_000_000_000L));
    }

    @Test
    void anAnswerSentBeforeTheCutThatArrivesAfterTheHealDoesNotCount() {
        // TCP resends, after the heal, an answer the old leader sent before the cut: invoked before the lease ended.
        LoadGenerator.AckCount c = new LoadGenerator.AckCount("10.77.1.1:7001", LEASE_END, Long.MIN_VALUE / 2);
        assertFalse(c.counts("10.77.1.1:7001", LEASE_END - 2_000_000L, LEASE_END + 3_000_000_000L));
    }

    @Test
    void anotherNodesAnswerNeverCounts() {
        LoadGenerator.AckCount c = new LoadGenerator.AckCount("10.77.1.1:7001", LEASE_END, Long.MIN_VALUE / 2);
        assertFalse(c.counts("10.77.1.2:7002", LEASE_END + 1, LEASE_END + 2));
        assertFalse(c.counts(null, LEASE_END + 1, LEASE_END + 2));
    }

    @Test
    void byReturnTimeOnlyTheReturnMatters() {
        // pause-leader's rule: anything returned after the moment.
        LoadGenerator.AckCount c = new LoadGenerator.AckCount("10.77.1.1:7001", Long.MIN_VALUE / 2, LEASE_END);
        assertTrue(c.counts("10.77.1.1:7001", 0, LEASE_END + 1));
        assertFalse(c.counts("10.77.1.1:7001", 0, LEASE_END - 1));
    }
}
