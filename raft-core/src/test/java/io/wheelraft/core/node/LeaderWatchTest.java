package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeaderWatchTest {

    private static final PeerId A = new PeerId("a", 1);
    private static final PeerId B = new PeerId("b", 2);

    @Test
    void aWaiterCompletesWhenTheLeaderOrTheTermChangesAndNotBefore() {
        LeaderWatch watch = new LeaderWatch(3, A);
        CompletableFuture<Void> leaderMoves = watch.await(3, A);
        watch.changed(3, A); // published again, unchanged
        assertFalse(leaderMoves.isDone(), "nothing changed");
        watch.changed(4, null); // a new term, nobody elected yet
        assertTrue(leaderMoves.isDone());

        CompletableFuture<Void> winner = watch.await(4, null);
        assertFalse(winner.isDone());
        watch.changed(4, B);
        assertTrue(winner.isDone(), "the winner of the term is a change");
    }

    /** The caller read the node's state just before a change landed: it is not left waiting for the next one. */
    @Test
    void aWaiterThatSawAnOlderStateCompletesAtOnce() {
        LeaderWatch watch = new LeaderWatch(3, A);
        watch.changed(4, B);
        assertTrue(watch.await(3, A).isDone());
        assertTrue(watch.await(4, null).isDone());
        assertFalse(watch.await(4, B).isDone());
    }

    @Test
    void closingCompletesEveryWaiterAndLaterOnesAtOnce() {
        LeaderWatch watch = new LeaderWatch(3, A);
        CompletableFuture<Void> waiting = watch.await(3, A);
        watch.close();
        assertTrue(waiting.isDone());
        assertTrue(watch.await(3, A).isDone(), "a stopped node has no election to wait for");
    }

    @Test
    void waitersGivenUpOnAreDropped() {
        LeaderWatch watch = new LeaderWatch(3, A);
        for (int i = 0; i < 100; i++) {
            watch.await(3, A).cancel(false);
        }
        CompletableFuture<Void> kept = watch.await(3, A);
        assertEquals(1, watch.waiting(), "cancelled waiters are not kept until the next change");
        watch.changed(3, B);
        assertTrue(kept.isDone());
        assertEquals(0, watch.waiting());
    }
}
