package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AnswerBatchTest {

    @Test
    void outsideABatchTheSenderMustSendItself() {
        AtomicInteger flushes = new AtomicInteger();
        assertFalse(AnswerBatch.defer(flushes::incrementAndGet));
        assertEquals(0, flushes.get());
    }

    @Test
    void aSenderDeferredManyTimesIsFlushedOnceWhenTheBatchEnds() {
        AtomicInteger flushes = new AtomicInteger();
        AnswerBatch.Sender sender = flushes::incrementAndGet;
        AnswerBatch.collect(() -> {
            assertTrue(AnswerBatch.defer(sender));
            assertTrue(AnswerBatch.defer(sender));
            // A nested batch joins the outer one: nothing is flushed when it ends.
            AnswerBatch.collect(() -> assertTrue(AnswerBatch.defer(sender)));
            assertEquals(0, flushes.get());
        });
        assertEquals(1, flushes.get());
        assertFalse(AnswerBatch.defer(sender), "the batch is closed");
    }

    @Test
    void deferredSendersAreFlushedEvenWhenTheBatchThrows() {
        AtomicInteger flushes = new AtomicInteger();
        assertThrows(IllegalStateException.class, () -> AnswerBatch.collect(() -> {
            AnswerBatch.defer(flushes::incrementAndGet);
            throw new IllegalStateException("state machine failed");
        }));
        assertEquals(1, flushes.get());
    }
}
