package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Lets callers wait for a node's term or known leader to move on from what they last saw,
 * instead of asking again and again while an election runs (see {@code Node#leaderChange}).
 * The node's Raft lane reports each change it publishes; waiters are completed outside the lock,
 * on that lane, so their continuations must be short. The watch keeps its own copy of the term
 * and leader, updated under the same lock as the waiters, so a waiter registered just as a change
 * lands is never left waiting for the next one. Thread-safe.
 */
final class LeaderWatch {

    private long term;
    private PeerId leader;
    private boolean closed;
    private List<CompletableFuture<Void>> waiting = new ArrayList<>();

    LeaderWatch(long term, PeerId leader) {
        this.term = term;
        this.leader = leader;
    }

    /**
     * A future that completes once the term or leader differs from {@code seenTerm} and
     * {@code seenLeader}: at once if it already does or the node has stopped. A caller that stops
     * waiting may cancel it; cancelled futures are dropped at the next registration.
     */
    CompletableFuture<Void> await(long seenTerm, PeerId seenLeader) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (!closed && term == seenTerm && Objects.equals(leader, seenLeader)) {
                waiting.removeIf(CompletableFuture::isDone); // given up on (cancelled or timed out by their owner)
                waiting.add(f);
                return f;
            }
        }
        f.complete(null);
        return f;
    }

    /** The lane published a term and leader: wakes every waiter if either changed. */
    void changed(long newTerm, PeerId newLeader) {
        List<CompletableFuture<Void>> due;
        synchronized (this) {
            if (newTerm == term && Objects.equals(newLeader, leader)) {
                return;
            }
            term = newTerm;
            leader = newLeader;
            due = takeWaiting();
        }
        due.forEach(f -> f.complete(null));
    }

    /** The node stopped: every waiter completes now, and later ones at once. */
    void close() {
        List<CompletableFuture<Void>> due;
        synchronized (this) {
            closed = true;
            due = takeWaiting();
        }
        due.forEach(f -> f.complete(null));
    }

    /** Waiters registered and not yet completed or given up on (tests). */
    synchronized int waiting() {
        waiting.removeIf(CompletableFuture::isDone);
        return waiting.size();
    }

    private List<CompletableFuture<Void>> takeWaiting() {
        List<CompletableFuture<Void>> due = waiting;
        waiting = new ArrayList<>();
        return due;
    }
}
