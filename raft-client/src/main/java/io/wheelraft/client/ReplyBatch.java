package io.wheelraft.client;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lets the answers produced while a thread works through one batch (the state machine applying a
 * batch of entries, the service reading one message of calls) leave together: a stream asked to
 * send inside {@link #collect} is flushed once when the batch ends, so one stream message carries
 * many answers. Outside {@link #collect}, senders send at once.
 *
 * <p>Per thread; {@link #collect} may nest (the inner call joins the outer batch).
 */
final class ReplyBatch {

    /** Something holding messages to send when the batch ends. */
    interface Sender {
        void flush();
    }

    private static final ThreadLocal<ReplyBatch> CURRENT = new ThreadLocal<>();

    private final Map<Sender, Boolean> pending = new IdentityHashMap<>();

    private ReplyBatch() {
    }

    static void collect(Runnable body) {
        if (CURRENT.get() != null) {
            body.run();
            return;
        }
        ReplyBatch batch = new ReplyBatch();
        CURRENT.set(batch);
        try {
            body.run();
        } finally {
            CURRENT.remove();
            List<Sender> senders = new ArrayList<>(batch.pending.keySet());
            for (Sender s : senders) {
                s.flush();
            }
        }
    }

    /** @return false when no batch is open on this thread: the caller sends now */
    static boolean defer(Sender sender) {
        ReplyBatch batch = CURRENT.get();
        if (batch == null) {
            return false;
        }
        batch.pending.put(sender, Boolean.TRUE);
        return true;
    }
}
