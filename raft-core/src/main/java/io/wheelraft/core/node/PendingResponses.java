package io.wheelraft.core.node;

import io.wheelraft.proto.AppendEntriesResponse;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;

/**
 * A follower's AppendEntries answers that acknowledge entries not yet on disk. An answer is
 * released only when the log is durable through the index it acknowledges, so a follower never
 * tells the leader it holds what a crash could lose. Owned by the Raft lane.
 */
final class PendingResponses {

    private record Pending(long requiredIndex, AppendEntriesResponse response, CompletableFuture<AppendEntriesResponse> future) {
    }

    private final ArrayDeque<Pending> queue = new ArrayDeque<>(1); // grows on demand; idle groups keep two slots, not seventeen

    /** Answers now if the log is durable far enough, else parks the answer. */
    void respond(long requiredIndex, long persistedIndex, AppendEntriesResponse response, CompletableFuture<AppendEntriesResponse> future) {
        if (queue.isEmpty() && requiredIndex <= persistedIndex) {
            future.complete(response);
        } else {
            queue.add(new Pending(requiredIndex, response, future));
        }
    }

    /** Releases, in order, every parked answer the durable log now covers. */
    void release(long persistedIndex) {
        while (!queue.isEmpty() && queue.peek().requiredIndex() <= persistedIndex) {
            Pending p = queue.poll();
            p.future().complete(p.response());
        }
    }

    /**
     * Entries from {@code fromIndex} were replaced: answers acknowledging them would be false.
     * They fail; the leader retries.
     */
    void discardFrom(long fromIndex, RuntimeException reason) {
        Iterator<Pending> it = queue.iterator();
        while (it.hasNext()) {
            Pending p = it.next();
            if (p.requiredIndex() >= fromIndex) {
                it.remove();
                p.future().completeExceptionally(reason);
            }
        }
    }

    void failAll(RuntimeException reason) {
        discardFrom(Long.MIN_VALUE, reason);
    }
}
