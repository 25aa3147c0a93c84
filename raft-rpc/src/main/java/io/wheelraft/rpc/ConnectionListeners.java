package io.wheelraft.rpc;

import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.core.spi.ConnectionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The listeners told about remote endpoints, and what they were last told about each one: lost
 * (and not restored since) or not. Every report about an endpoint goes through here, whichever
 * part of the transport saw it (an inbound connection closing, an outbound channel failing, the
 * liveness watch), so that one loss is reported once however many of them notice it.
 *
 * <p>The rule: an endpoint that is {@link #watch watched} by the liveness heartbeat is reported
 * lost only while it is not already lost; its next answer ({@link #fireAnswered}) restores it.
 * An endpoint that is not watched has nothing that could restore it, so every break seen on it is
 * reported (listeners treat the signal as idempotent), as before the heartbeat existed.
 *
 * <p>Thread-safe: reports come from I/O threads and the transport's timer. The decision and the
 * delivery for one endpoint happen under that endpoint's lock, so listeners see its lost and
 * restored reports in the order they were decided (listeners must not block). Listeners may be
 * added and removed meanwhile; one that throws is logged and does not stop the others. Once
 * {@link #silence() silenced} (the transport is shutting down) nothing more is delivered, so a
 * graceful shutdown never looks like a peer failure.
 */
final class ConnectionListeners {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionListeners.class);

    /** A concurrent set, not a copy-on-write list: a process hosting N groups adds N listeners (N² copying otherwise). */
    private final Set<ConnectionListener> listeners = ConcurrentHashMap.newKeySet();
    private volatile boolean silenced;
    private final Map<String, Told> endpoints = new ConcurrentHashMap<>();
    /** Tries each broken endpoint once for a refusal ({@link PeerGoneProbe}); null: no probing. */
    private volatile PeerGoneProbe probe;

    /**
     * What listeners were told about one endpoint; guarded by its own lock. A peer that stays down
     * or flaps would log every report: one line per endpoint and kind per interval.
     */
    private static final class Told {
        boolean watched;
        /** Reported lost (by a break) or silent, and not restored since. */
        boolean lost;
        /** The report was a break (a reset, a restart), not only silence. */
        boolean broken;
        /** Counts the breaks reported, so a probe's answer about an earlier one is ignored. */
        long lossEpoch;
        /** This loss was reported gone ({@link #fireGone}). */
        boolean gone;
        final RateLimitedLog lostLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
        final RateLimitedLog restoredLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
        final RateLimitedLog restartedLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
        final RateLimitedLog goneLog = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    }

    void add(ConnectionListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void remove(ConnectionListener listener) {
        listeners.remove(listener);
    }

    /** From now on every reported break is followed by one connection attempt to the endpoint. */
    void probeBreaksWith(PeerGoneProbe probe) {
        this.probe = probe;
    }

    void silence() {
        silenced = true;
    }

    boolean silenced() {
        return silenced;
    }

    /** The liveness heartbeat watches {@code endpoint} from now on: its losses are reported once, until it answers again. */
    void watch(String endpoint) {
        Told t = told(endpoint);
        synchronized (t) {
            t.watched = true;
        }
    }

    /** Whether listeners were told {@code endpoint} is lost and not told since that it is back (tests and diagnostics). */
    boolean reportedLost(String endpoint) {
        Told t = endpoints.get(endpoint);
        if (t == null) {
            return false;
        }
        synchronized (t) {
            return t.lost;
        }
    }

    /**
     * The connection to {@code endpoint} broke; {@code why} is for the log. Reported unless the
     * endpoint is watched and already reported lost.
     */
    void fireLost(String endpoint, String why) {
        Told t = told(endpoint);
        long epoch;
        synchronized (t) {
            if (silenced || (t.watched && t.lost && t.broken)) {
                return; // a silent endpoint whose connection then breaks is reported again: a break says more
            }
            t.lost = true;
            t.broken = true;
            t.gone = false;
            epoch = ++t.lossEpoch;
            t.lostLog.info(nowMs(), "connection to {} lost ({})", endpoint, why);
            deliverLost(endpoint);
        }
        PeerGoneProbe p = probe;
        if (p != null) {
            p.probe(endpoint, epoch); // outside the lock: it opens a socket; its answer checks the epoch
        }
    }

    /**
     * A connection attempt after break {@code lossEpoch} of {@code endpoint} was refused: its process
     * is gone. Reported once per break, and only while that break is the latest and not restored.
     */
    void fireGone(String endpoint, long lossEpoch) {
        Told t = told(endpoint);
        synchronized (t) {
            if (silenced || !t.lost || !t.broken || t.gone || t.lossEpoch != lossEpoch) {
                return;
            }
            t.gone = true;
            t.goneLog.info(nowMs(), "{} refuses connections: the process there is gone", endpoint);
            deliver(endpoint, "end of the process", ConnectionListener::onPeerGone);
        }
    }

    /**
     * {@code endpoint} gave no sign of life for {@code silentMs}: reported lost unless it already is.
     * Called on every liveness check while the endpoint stays silent, so it allocates nothing then.
     */
    void fireSilent(String endpoint, long silentMs) {
        Told t = told(endpoint);
        synchronized (t) {
            if (silenced || t.lost) {
                return;
            }
            t.lost = true;
            t.lostLog.info(nowMs(), "connection to {} silent: no sign of life for {} ms", endpoint, silentMs);
            deliverSilent(endpoint);
        }
    }

    /** {@code endpoint} answered, as the same process as before: restored if it was reported lost. */
    void fireAnswered(String endpoint) {
        Told t = told(endpoint);
        synchronized (t) {
            if (silenced || !t.lost) {
                return;
            }
            t.lost = false;
            t.broken = false;
            t.restoredLog.info(nowMs(), "connection to {} restored: it answers again", endpoint);
            deliverRestored(endpoint);
        }
    }

    /**
     * {@code endpoint} answered as a new process (it restarted since it was last heard). Listeners
     * are told it was lost, unless they already were, and then that it is restored: a restart is
     * a loss (whatever the old process had in memory is gone) however fast it was.
     */
    void fireRestarted(String endpoint) {
        Told t = told(endpoint);
        synchronized (t) {
            if (silenced) {
                return;
            }
            if (t.broken) {
                t.restartedLog.info(nowMs(), "connection to {} restored: it answers again, restarted", endpoint);
            } else {
                // Not reported, or only silent: a restart is a loss (the old process's state is gone).
                t.restartedLog.info(nowMs(), "{} restarted since it was last heard: reported lost and restored", endpoint);
                deliverLost(endpoint);
            }
            t.lost = false;
            t.broken = false;
            deliverRestored(endpoint);
        }
    }

    private Told told(String endpoint) {
        return endpoints.computeIfAbsent(endpoint, e -> new Told());
    }

    private void deliverLost(String endpoint) {
        deliver(endpoint, "loss", ConnectionListener::onConnectionLost);
    }

    private void deliverSilent(String endpoint) {
        deliver(endpoint, "silence", ConnectionListener::onPeerSilent);
    }

    private void deliverRestored(String endpoint) {
        deliver(endpoint, "return", ConnectionListener::onConnectionRestored);
    }

    /** Tells every listener; one that throws is logged and the others are still told. */
    private void deliver(String endpoint, String what, java.util.function.BiConsumer<ConnectionListener, String> report) {
        for (ConnectionListener l : listeners) {
            try {
                report.accept(l, endpoint);
            } catch (RuntimeException e) {
                LOG.warn("connection listener {} failed on the {} of {}", l, what, endpoint, e);
            }
        }
    }

    private static long nowMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    }
}
