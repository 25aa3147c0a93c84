package io.wheelraft.client;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lets the messages a thread queues while it works through one batch leave together: a
 * {@link Sender} that {@link #defer}s inside {@link #gatherWhile} is flushed once, when the batch
 * ends, so one stream message carries everything the batch queued for it (Nagle turned around:
 * send at once when idle, gather while a batch is being handled). Outside a batch, {@link #defer}
 * answers false and the sender sends at once.
 *
 * <p>Two scopes use it: the service gathers the answers of one apply batch or one message of
 * calls ({@link #ANSWERS}), the client gathers the calls its callers queue while it handles one
 * message of answers ({@link #CALLS}). They are separate, so one never holds back the other's
 * messages.
 *
 * <p>Threading: each instance keeps one batch per thread (a {@link ThreadLocal}); a thread's
 * nested {@link #gatherWhile} joins its outer batch. Senders are flushed on the gathering thread,
 * after its batch is closed, so what a flush queues in turn is sent at once.
 */
final class SendGathering {

    /** Something holding queued messages, sent by {@link #flush}. */
    interface Sender {
        void flush();
    }

    /** The service's answers: per apply batch and per message of calls read. */
    static final SendGathering ANSWERS = new SendGathering();
    /** The client's calls: per message of answers handled. */
    static final SendGathering CALLS = new SendGathering();

    /** This thread's senders waiting for the batch to end; absent outside a batch. */
    private final ThreadLocal<Map<Sender, Boolean>> current = new ThreadLocal<>();

    /** Runs {@code body}, then flushes every sender that deferred during it (also if it throws). */
    void gatherWhile(Runnable body) {
        if (current.get() != null) {
            body.run();
            return;
        }
        Map<Sender, Boolean> deferred = new IdentityHashMap<>();
        current.set(deferred);
        try {
            body.run();
        } finally {
            current.remove();
            flushAll(deferred);
        }
    }

    /**
     * Holds {@code sender}'s flush until this thread's batch ends (once, however often it defers).
     *
     * @return false when no batch is open on this thread: the caller flushes now
     */
    boolean defer(Sender sender) {
        Map<Sender, Boolean> deferred = current.get();
        if (deferred == null) {
            return false;
        }
        deferred.put(sender, Boolean.TRUE);
        return true;
    }

    /**
     * Flushes now what this thread's batch gathered so far, e.g. before the thread blocks, so its
     * own messages are not held back by its waiting; the batch stays open for what comes next.
     */
    void flushGathered() {
        Map<Sender, Boolean> deferred = current.get();
        if (deferred != null && !deferred.isEmpty()) {
            flushAll(deferred);
        }
    }

    /** Empties {@code deferred} first: a sender that defers again while flushing is gathered anew. */
    private static void flushAll(Map<Sender, Boolean> deferred) {
        List<Sender> senders = new ArrayList<>(deferred.keySet());
        deferred.clear();
        for (Sender s : senders) {
            s.flush();
        }
    }
}
