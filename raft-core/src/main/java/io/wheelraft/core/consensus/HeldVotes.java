package io.wheelraft.core.consensus;

import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;

import java.util.ArrayList;
import java.util.List;

/**
 * Pre-vote answers a voter holds back while it confirms that its leader is lost (its own report
 * of the broken connection, or its own election timeout, is due within a short window). Each
 * is decided later by {@link VoteAnswers}: granted once the voter sees the leader lost itself,
 * refused when it hears from the leader or the deadline passes. Only data: the answer leaves
 * through the {@link Ready} batch. Not thread-safe: owned by the core, on the node's Raft lane.
 */
final class HeldVotes {

    /** One held pre-vote request and where its answer goes. */
    static final class Held {
        final RequestVoteRequest request;
        final VoteReply replyTo;
        long deadlineMs;

        Held(RequestVoteRequest request, VoteReply replyTo, long deadlineMs) {
            this.request = request;
            this.replyTo = replyTo;
            this.deadlineMs = deadlineMs;
        }
    }

    private final List<Held> held = new ArrayList<>(2);

    void add(RequestVoteRequest request, VoteReply replyTo, long deadlineMs) {
        held.add(new Held(request, replyTo, deadlineMs));
    }

    boolean isEmpty() {
        return held.isEmpty();
    }

    /** The earliest deadline of a held answer, or {@link Long#MAX_VALUE} if none is held. */
    long earliestDeadlineMs() {
        long min = Long.MAX_VALUE;
        for (Held h : held) {
            min = Math.min(min, h.deadlineMs);
        }
        return min;
    }

    /** Removes and returns every held answer (the caller decides each, and may hold some again). */
    List<Held> takeAll() {
        if (held.isEmpty()) {
            return List.of();
        }
        List<Held> all = new ArrayList<>(held);
        held.clear();
        return all;
    }

    /** Puts back an answer still undecided. */
    void keep(Held h) {
        held.add(h);
    }

    /** How many answers are held (for tests and logs). */
    int size() {
        return held.size();
    }
}
