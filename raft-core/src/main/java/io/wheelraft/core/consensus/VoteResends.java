package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.RequestVoteRequest;

import java.util.ArrayList;
import java.util.List;

/**
 * Vote requests to ask again because the voter answered that it does not host the group (yet):
 * a process starting thousands of groups brings them up one by one, and a candidate whose peer
 * has not reached this group would otherwise count the answer as a refusal and lose a round that
 * the same voter could grant a moment later. Each is due once, a pause after the answer; the
 * election checks at that time that the request's round is still the one running. Election only;
 * not thread-safe.
 */
final class VoteResends {

    record Resend(PeerId to, RequestVoteRequest request, long dueMs) {
    }

    private final List<Resend> pending = new ArrayList<>(2);

    void schedule(PeerId to, RequestVoteRequest request, long dueMs) {
        pending.removeIf(r -> r.to().equals(to)); // one per voter: the newest round's
        pending.add(new Resend(to, request, dueMs));
    }

    /** The earliest due time; MAX_VALUE if none is pending. */
    long earliestMs() {
        long at = Long.MAX_VALUE;
        for (Resend r : pending) {
            at = Math.min(at, r.dueMs());
        }
        return at;
    }

    /** Takes out the resends due at {@code nowMs}, in the order they were scheduled. */
    List<Resend> takeDue(long nowMs) {
        if (pending.isEmpty()) {
            return List.of();
        }
        List<Resend> due = new ArrayList<>(pending.size());
        pending.removeIf(r -> {
            if (r.dueMs() <= nowMs) {
                due.add(r);
                return true;
            }
            return false;
        });
        return due;
    }

    void clear() {
        pending.clear();
    }
}
