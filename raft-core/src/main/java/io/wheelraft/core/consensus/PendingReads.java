package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The leader's linearizable reads in flight (thesis §6.4): batches waiting for a heartbeat round
 * to be acknowledged by a quorum, and reads that arrived before the leader committed an entry of
 * its own term. Reads are opaque handles to the core; reads held for the term's first commit
 * keep the way their caller chose to confirm them (lease or quorum round). Owned by the Raft lane.
 */
final class PendingReads {

    private record Batch(List<ReadHandle> handles, long readIndex, long round) {
    }

    private final ArrayDeque<Batch> confirming = new ArrayDeque<>();
    private final List<Waiting> awaitingTermCommit = new ArrayList<>();

    /** Reads held until the term's first commit, with whether they may be confirmed by the lease. */
    record Waiting(List<ReadHandle> handles, boolean lease) {
    }

    void awaitTermCommit(List<ReadHandle> handles, boolean lease) {
        awaitingTermCommit.add(new Waiting(List.copyOf(handles), lease));
    }

    /** Removes and returns the reads that waited for the first commit of the term, in arrival order. */
    List<Waiting> takeAwaitingTermCommit() {
        List<Waiting> out = new ArrayList<>(awaitingTermCommit);
        awaitingTermCommit.clear();
        return out;
    }

    boolean hasAwaitingTermCommit() {
        return !awaitingTermCommit.isEmpty();
    }

    void add(List<ReadHandle> handles, long readIndex, long round) {
        confirming.add(new Batch(handles, readIndex, round));
    }

    boolean isConfirming() {
        return !confirming.isEmpty();
    }

    /** Releases, in order, every batch whose heartbeat round a quorum has acknowledged. */
    void confirm(LongPredicate roundAcked, Ready out) {
        while (!confirming.isEmpty() && roundAcked.test(confirming.peek().round())) {
            Batch b = confirming.poll();
            out.event(new Ready.ReadsConfirmed(b.handles(), b.readIndex()));
        }
    }

    /** Leadership is gone: every read fails (with the new leader as a hint, if known). */
    void failAll(Ready out, PeerId leaderHint) {
        List<ReadHandle> failed = new ArrayList<>();
        for (Waiting w : takeAwaitingTermCommit()) {
            failed.addAll(w.handles());
        }
        for (Batch b : confirming) {
            failed.addAll(b.handles());
        }
        confirming.clear();
        if (!failed.isEmpty()) {
            out.event(new Ready.ReadsFailed(failed, leaderHint));
        }
    }
}
