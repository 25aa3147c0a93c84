package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bounded history of a chaos run stays checkable when a long run fills it. */
class ChaosRecorderTest {

    private static CounterClient.Outcome ok(long value) {
        return new CounterClient.Outcome(CounterClient.Outcome.Kind.OK, value, "", "n1");
    }

    @Test
    void anIncrementPastTheBoundThatOverlapsARecordedOneIsKeptWithAnUnknownOutcome() {
        ChaosRecorder r = new ChaosRecorder(System.nanoTime(), 2);
        Object a = r.invoked(0);
        Object b = r.invoked(1); // the history is full
        Object c = r.invoked(2); // past the bound, but a and b are in flight: it may show in their answers
        assertNotNull(c, "an increment overlapping recorded ones must stay in the history");
        r.returned(c, ok(1), 1);
        r.returned(b, ok(2), 1);
        r.returned(a, ok(3), 1); // a saw c's increment
        assertNull(r.invoked(0), "with nothing recorded in flight, later increments are dropped");
        assertEquals(1, r.droppedFromHistory());
        r.finalRead(4L); // counts the dropped increment: left out of the check

        HistoryCheck.Verdict v = HistoryCheck.check(r.history().operations(), Duration.ofSeconds(10));
        assertTrue(v.linearizable(), "a full history of a correct run must check as linearizable: " + v.outcome());
        assertEquals(3, v.operations(), "a, b and c, without the final read");
        assertEquals(1, v.unknownOutcomes(), "c's outcome counts as unknown");
    }
}
