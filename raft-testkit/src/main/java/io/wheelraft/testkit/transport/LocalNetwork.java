package io.wheelraft.testkit.transport;

import io.wheelraft.timer.Timer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An in-process network of {@link LocalTransport}s, one per simulated endpoint, for tests and
 * benchmarks that want real threads and real time without sockets (the deterministic simulation
 * lives in {@code io.wheelraft.core.sim}). Thread-safe.
 */
public final class LocalNetwork {

    private final Map<String, LocalTransport> endpoints = new ConcurrentHashMap<>();
    private final Timer timer;

    /** @param timer used for call deadlines */
    public LocalNetwork(Timer timer) {
        this.timer = timer;
    }

    /** The transport of {@code endpoint} ({@code host:port}), created on first use. */
    public LocalTransport transport(String endpoint) {
        return endpoints.computeIfAbsent(endpoint, e -> new LocalTransport(this, e));
    }

    LocalTransport find(String endpoint) {
        LocalTransport t = endpoints.get(endpoint);
        return t == null || t.isClosed() ? null : t;
    }

    Timer timer() {
        return timer;
    }

    /** The endpoint's process dies: its transport closes and every other endpoint is told its connection broke. */
    public void kill(String endpoint) {
        LocalTransport dead = endpoints.remove(endpoint);
        if (dead != null) {
            dead.close();
        }
        for (LocalTransport t : List.copyOf(endpoints.values())) {
            t.connectionLost(endpoint);
        }
    }
}
