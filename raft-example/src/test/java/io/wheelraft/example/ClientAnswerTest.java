package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the client prints: a read that did not complete answers fail, an increment keeps unknown. */
class ClientAnswerTest {

    private static final CounterClient.Outcome TIMED_OUT =
            new CounterClient.Outcome(CounterClient.Outcome.Kind.UNKNOWN, 0, "timed out after 300 ms", null);

    @Test
    void aGetThatTimedOutAnswersFail() {
        CounterClient.Outcome o = ClientCommand.Request.parse("get").settle(TIMED_OUT);
        assertEquals(CounterClient.Outcome.Kind.FAIL, o.kind());
        assertTrue(o.line().startsWith("fail timed out after 300 ms"), o.line());
    }

    @Test
    void anIncrementThatTimedOutStaysUnknown() {
        assertEquals("unknown timed out after 300 ms", ClientCommand.Request.parse("incr 2").settle(TIMED_OUT).line());
    }

    @Test
    void settledAnswersPassUnchanged() {
        CounterClient.Outcome ok = new CounterClient.Outcome(CounterClient.Outcome.Kind.OK, 5, "", "a:1");
        assertEquals("ok 5", ClientCommand.Request.parse("get").settle(ok).line());
    }
}
