package io.wheelraft.rpc;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What this process knows of one remote endpoint's liveness: when it last gave a sign of life,
 * which incarnation of the process there answered the last ping, and whether a ping to it is under
 * way. Turns answers and silence into reports through {@link ConnectionListeners}, which keeps a
 * loss that several parts of the transport notice from being reported twice.
 *
 * <p>A sign of life is a ping answered, or any answer to a Raft call (a busy link then needs no
 * ping to get through in time). Only a ping answer restores an endpoint reported lost: it is the
 * one that names the incarnation, so a restart is told apart from a return. An endpoint that never
 * answered since it was first watched counts as silent since then.
 *
 * <p>Thread-safe: signs of life arrive on I/O threads, the silence check runs on the transport's
 * timer. Times are {@link System#nanoTime()} values passed in by the caller.
 */
final class EndpointLiveness {

    private final String endpoint;
    private final ConnectionListeners listeners;
    private final long silenceNanos;
    private volatile long lastHeardNanos;
    /** The incarnation that answered the last ping; 0 until one answers with it. Guarded by this. */
    private long incarnation;
    private final AtomicBoolean pinging = new AtomicBoolean();
    /** When the endpoint's own ping last proved a round trip (see {@link #pingedUs}); 0: never. */
    private volatile long pingedUsNanos;

    EndpointLiveness(String endpoint, ConnectionListeners listeners, long silenceMs, long watchedSinceNanos) {
        this.endpoint = endpoint;
        this.listeners = listeners;
        this.silenceNanos = TimeUnit.MILLISECONDS.toNanos(silenceMs);
        this.lastHeardNanos = watchedSinceNanos;
    }

    String endpoint() {
        return endpoint;
    }

    /** A Raft call to the endpoint was answered. Cheap: called once per answer on the replication path. */
    void heard(long nowNanos) {
        lastHeardNanos = nowNanos;
    }

    /**
     * A ping was answered by {@code theirIncarnation} (0: a server that answers but runs no liveness
     * service, so it cannot tell a restart). Restores an endpoint reported lost; reports a restart
     * when the incarnation changed.
     */
    synchronized void answered(long theirIncarnation, long nowNanos) {
        lastHeardNanos = nowNanos;
        long known = incarnation;
        if (theirIncarnation != 0) {
            incarnation = theirIncarnation;
        }
        if (known != 0 && theirIncarnation != 0 && theirIncarnation != known) {
            listeners.fireRestarted(endpoint);
        } else {
            listeners.fireAnswered(endpoint);
        }
    }

    /**
     * The endpoint's own liveness ping reached this process and showed that this process's answer
     * to its previous one reached it: both directions work, as an answer to a ping of ours would
     * show, and it names the endpoint's incarnation. Counts as that answer.
     */
    void pingedUs(long theirIncarnation, long nowNanos) {
        pingedUsNanos = nowNanos;
        answered(theirIncarnation, nowNanos);
    }

    /** Whether {@link #pingedUs} was called after {@code sinceNanos}: a ping of ours would prove nothing more. */
    boolean pingedUsSince(long sinceNanos) {
        long at = pingedUsNanos;
        return at != 0 && at - sinceNanos > 0;
    }

    /** Reports the endpoint lost if it gave no sign of life for the silence allowed (once: until it answers again). */
    void checkSilence(long nowNanos) {
        checkSilence(nowNanos, Long.MIN_VALUE);
    }

    /**
     * As {@link #checkSilence(long)}, counting the silence from {@code listeningSinceNanos} at the
     * earliest: when this process itself was stalled until then (a pause, a saturated CPU), it could
     * not have heard the endpoint, so the endpoint gets the whole silence allowed from that moment.
     * {@code Long.MIN_VALUE}: no stall.
     */
    void checkSilence(long nowNanos, long listeningSinceNanos) {
        long silent = silentNanos(nowNanos, listeningSinceNanos);
        if (silent >= silenceNanos) {
            listeners.fireSilent(endpoint, TimeUnit.NANOSECONDS.toMillis(silent));
        }
    }

    /** Whether {@link #checkSilence(long, long)} would report the endpoint now (it reports nothing itself). */
    boolean silentNow(long nowNanos, long listeningSinceNanos) {
        return silentNanos(nowNanos, listeningSinceNanos) >= silenceNanos;
    }

    private long silentNanos(long nowNanos, long listeningSinceNanos) {
        long heard = lastHeardNanos;
        boolean stalledSince = listeningSinceNanos != Long.MIN_VALUE && listeningSinceNanos - heard > 0;
        return nowNanos - (stalledSince ? listeningSinceNanos : heard);
    }

    /** Claims the endpoint's one ping slot; false while a ping is under way (a silent peer is not sent a pile of them). */
    boolean startPing() {
        return pinging.compareAndSet(false, true);
    }

    /** The ping under way ended, answered or not. */
    void pingEnded() {
        pinging.set(false);
    }
}
