package io.wheelraft.rpc;

import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.core.spi.ConnectionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The listeners told when a connection to a remote endpoint breaks. Thread-safe: listeners may
 * be added and removed while signals are being delivered; a listener that throws is logged and
 * does not stop the others. Once {@link #silence() silenced} (the transport is shutting down)
 * nothing more is delivered, so a graceful shutdown never looks like a peer failure.
 */
final class ConnectionListeners {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionListeners.class);

    private final CopyOnWriteArrayList<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean silenced;
    /** A peer that stays down breaks every reconnect attempt: one line per peer per interval. */
    private final Map<String, RateLimitedLog> lostLogs = new ConcurrentHashMap<>();

    void add(ConnectionListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void remove(ConnectionListener listener) {
        listeners.remove(listener);
    }

    void silence() {
        silenced = true;
    }

    boolean silenced() {
        return silenced;
    }

    /** Tells every listener that the connection to {@code endpoint} broke; why is for the log. */
    void fireLost(String endpoint, String why) {
        if (silenced) {
            return;
        }
        lostLogs.computeIfAbsent(endpoint, e -> new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS))
                .info(TimeUnit.NANOSECONDS.toMillis(System.nanoTime()), "connection to {} lost ({})", endpoint, why);
        for (ConnectionListener l : listeners) {
            try {
                l.onConnectionLost(endpoint);
            } catch (RuntimeException e) {
                LOG.warn("connection listener {} failed for endpoint {}", l, endpoint, e);
            }
        }
    }
}
