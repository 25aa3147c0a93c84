package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The leader's linearizable reads in flight (thesis §6.4): batches waiting for a heartbeat round
 * to be acknowledged by a quorum, and reads that arrived before the leader committed an entry of
 * its own term. Reads are opaque handles to the core. Owned by the Raft lane.
 */
final class PendingReads {

    private record Batch(List<Object> handles, long readIndex, long round) {
    }

    private final ArrayDeque<Batch> confirming = new ArrayDeque<>();
    private final List<Object> awaitingTermCommit = new ArrayList<>();

    void awaitTermCommit(List<Object> handles) {
        awaitingTermCommit.addAll(handles);
    }

    /** Removes and returns the reads that waited for the first commit of the term. */
    List<Object> takeAwaitingTermCommit() {
        List<Object> out = new ArrayList<>(awaitingTermCommit);
        awaitingTermCommit.clear();
        return out;
    }

    boolean hasAwaitingTermCommit() {
        return !awaitingTermCommit.isEmpty();
    }

    void add(List<Object> handles, long readIndex, long round) {
        confirming.add(new Batch(handles, readIndex, round));
    }

    boolean isConfirming() {
        return !confirming.isEmpty();
    }

    /** Releases, in order, every batch whose heartbeat round a quorum has acknowledged. */
    void confirm(LongPredicate roundAcked, RaftEffects effects) {
        while (!confirming.isEmpty() && roundAcked.test(confirming.peek().round())) {
            Batch b = confirming.poll();
            effects.readsConfirmed(b.handles(), b.readIndex());
        }
    }

    /** Leadership is gone: every read fails (with the new leader as a hint, if known). */
    void failAll(RaftEffects effects, PeerId leaderHint) {
        List<Object> failed = takeAwaitingTermCommit();
        for (Batch b : confirming) {
            failed.addAll(b.handles());
        }
        confirming.clear();
        if (!failed.isEmpty()) {
            effects.readsFailed(failed, leaderHint);
        }
    }
}
