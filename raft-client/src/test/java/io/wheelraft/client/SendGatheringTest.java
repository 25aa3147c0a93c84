package io.wheelraft.client;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-thread gathering that lets what one batch queues leave in one message: a sender is
 * flushed once at the end of the batch however often it deferred, nested batches join the outer
 * one, an early flush sends what was gathered so far, and batches of other threads or of the
 * other scope hold nothing back.
 */
class SendGatheringTest {

    /** Stands for a stream: counts its queued messages and the flushes that sent them. */
    private static final class Outbox implements SendGathering.Sender {
        final SendGathering scope;
        final List<Integer> messages = new ArrayList<>();
        int queued;

        Outbox(SendGathering scope) {
            this.scope = scope;
        }

        /** Queues one item the way the client and the service do: defer, or flush at once. */
        void queue() {
            queued++;
            if (!scope.defer(this)) {
                flush();
            }
        }

        @Override
        public void flush() {
            if (queued > 0) {
                messages.add(queued);
                queued = 0;
            }
        }
    }

    private final SendGathering gathering = new SendGathering();

    @Test
    void outsideABatchEachItemIsSentAtOnce() {
        Outbox out = new Outbox(gathering);
        out.queue();
        out.queue();
        assertEquals(List.of(1, 1), out.messages);
    }

    @Test
    void whatABatchQueuesLeavesInOneMessagePerSenderWhenTheBatchEnds() {
        Outbox a = new Outbox(gathering);
        Outbox b = new Outbox(gathering);
        gathering.gatherWhile(() -> {
            for (int i = 0; i < 5; i++) {
                a.queue();
            }
            b.queue();
            assertTrue(a.messages.isEmpty() && b.messages.isEmpty(), "nothing leaves before the batch ends");
        });
        assertEquals(List.of(5), a.messages);
        assertEquals(List.of(1), b.messages);
    }

    @Test
    void aNestedBatchJoinsTheOuterOne() {
        Outbox out = new Outbox(gathering);
        gathering.gatherWhile(() -> {
            out.queue();
            gathering.gatherWhile(out::queue);
            assertTrue(out.messages.isEmpty(), "the inner batch's end sends nothing");
            out.queue();
        });
        assertEquals(List.of(3), out.messages);
    }

    @Test
    void flushGatheredSendsNowAndTheBatchGoesOnGathering() {
        Outbox out = new Outbox(gathering);
        gathering.gatherWhile(() -> {
            out.queue();
            out.queue();
            gathering.flushGathered();
            assertEquals(List.of(2), out.messages, "sent before the thread would block");
            out.queue();
            assertEquals(List.of(2), out.messages, "still gathering after the early flush");
        });
        assertEquals(List.of(2, 1), out.messages);
    }

    @Test
    void flushGatheredOutsideABatchDoesNothing() {
        Outbox out = new Outbox(gathering);
        gathering.flushGathered();
        out.queue();
        assertEquals(List.of(1), out.messages);
    }

    @Test
    void aBatchThatThrowsStillSendsWhatItQueued() {
        Outbox out = new Outbox(gathering);
        assertThrows(IllegalStateException.class, () -> gathering.gatherWhile(() -> {
            out.queue();
            throw new IllegalStateException("a callback failed");
        }));
        assertEquals(List.of(1), out.messages);
        out.queue();
        assertEquals(List.of(1, 1), out.messages, "the batch is closed after the failure");
    }

    @Test
    void whatAFlushQueuesAfterTheBatchEndedIsSentAtOnce() {
        Outbox follow = new Outbox(gathering);
        SendGathering.Sender first = () -> follow.queue(); // e.g. a send that completes a call whose callback sends
        gathering.gatherWhile(() -> assertTrue(gathering.defer(first)));
        assertEquals(List.of(1), follow.messages);
    }

    @Test
    void anotherThreadsBatchHoldsNothingBack() throws Exception {
        Outbox out = new Outbox(gathering);
        CompletableFuture<List<Integer>> seenInside = new CompletableFuture<>();
        gathering.gatherWhile(() -> {
            CompletableFuture<Void> other = CompletableFuture.runAsync(out::queue);
            other.join();
            seenInside.complete(List.copyOf(out.messages));
        });
        assertEquals(List.of(1), seenInside.get(10, TimeUnit.SECONDS), "the other thread, outside any batch, sent at once");
    }

    @Test
    void theClientsAndTheServicesScopesAreSeparate() {
        Outbox call = new Outbox(SendGathering.CALLS);
        Outbox answer = new Outbox(SendGathering.ANSWERS);
        SendGathering.ANSWERS.gatherWhile(() -> {
            call.queue();
            answer.queue();
            assertEquals(List.of(1), call.messages, "an apply batch does not hold back the client's calls");
            assertFalse(answer.messages.size() > 0, "the answer waits for the batch");
        });
        assertEquals(List.of(1), answer.messages);
    }
}
