package io.wheelraft.example;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lets the answers produced while a thread works through one batch (the state machine applying a
 * batch of entries, a client handling a batch of replies) leave together: a sender asked to send
 * inside {@link #collect} keeps its messages and is flushed once when the batch ends, so one
 * stream message carries many answers instead of one each. Outside {@link #collect}, senders send
 * at once.
 *
 * <p>Per thread; {@link #collect} may nest (the inner call joins the outer batch).
 */
final class AnswerBatch {

    /** Something holding messages to send when the batch ends. */
    interface Sender {
        void flush();
    }

    private static final ThreadLocal<AnswerBatch> CURRENT = new ThreadLocal<>();

    private final Map<Sender, Boolean> pending = new IdentityHashMap<>();

    private AnswerBatch() {
    }

    /** Runs {@code body}; senders that {@link #defer} during it are flushed when it returns (or throws). */
    static void collect(Runnable body) {
        if (CURRENT.get() != null) {
            body.run();
            return;
        }
        AnswerBatch batch = new AnswerBatch();
        CURRENT.set(batch);
        try {
            body.run();
        } finally {
            CURRENT.remove();
            batch.flushAll();
        }
    }

    /**
     * Registers {@code sender} to be flushed at the end of this thread's batch.
     *
     * @return false when no batch is open on this thread: the caller sends now
     */
    static boolean defer(Sender sender) {
        AnswerBatch batch = CURRENT.get();
        if (batch == null) {
            return false;
        }
        batch.pending.put(sender, Boolean.TRUE);
        return true;
    }

    private void flushAll() {
        List<Sender> senders = new ArrayList<>(pending.keySet());
        pending.clear();
        for (Sender s : senders) {
            s.flush();
        }
    }
}
