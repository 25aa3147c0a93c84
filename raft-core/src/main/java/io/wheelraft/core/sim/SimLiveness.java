package io.wheelraft.core.sim;

import io.wheelraft.core.spi.ConnectionListener;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The simulated processes' liveness watch, as a transport with a per-process heartbeat keeps it
 * (see {@link SimNetwork#watchLiveness}): one ping per ordered pair of processes per interval,
 * a silent process reported with {@code onPeerSilent}, a restarted one as lost and restored,
 * lost like any message (the network's drop rate, partitions, dead or hung processes).
 */
final class SimLiveness {

    private final SimNetwork network;
    private final SimRuntime runtime;
    private final int intervalMs;
    private final int silenceMs;
    /** watcher -> watched -> when last heard (sim ms). */
    private final Map<String, Map<String, Long>> lastHeard = new HashMap<>();
    /** watcher -> watched -> the incarnation last heard from. */
    private final Map<String, Map<String, Integer>> heardIncarnation = new HashMap<>();
    /** watcher -> the endpoints it has reported silent (and not lost by a break since). */
    private final Map<String, Set<String>> silentOnly = new HashMap<>();
    /** watcher -> the endpoints it has reported lost and not back. */
    private final Map<String, Set<String>> reportedLost = new HashMap<>();

    SimLiveness(SimNetwork network, SimRuntime runtime, int intervalMs, int silenceMs) {
        if (intervalMs < 1 || silenceMs <= intervalMs) {
            throw new IllegalArgumentException("liveness needs intervalMs >= 1 and silenceMs > intervalMs, was " + intervalMs + ", " + silenceMs);
        }
        this.network = network;
        this.runtime = runtime;
        this.intervalMs = intervalMs;
        this.silenceMs = silenceMs;
    }

    long detectMs() {
        return (long) silenceMs + intervalMs;
    }

    void start() {
        runtime.timer().newTimeout(t -> tick(), intervalMs, TimeUnit.MILLISECONDS);
    }

    /** The connection broke and {@code at} already reported {@code lost}: silence must not report it again. */
    void markLost(String at, String lost) {
        reportedLost.computeIfAbsent(at, k -> new HashSet<>()).add(lost);
        silentOnly.computeIfAbsent(at, k -> new HashSet<>()).remove(lost);
    }

    private void tick() {
        long now = runtime.clock().millis();
        for (SimNetwork.Process a : network.processes()) {
            if (!a.alive) {
                continue;
            }
            for (SimNetwork.Process b : network.processes()) {
                if (b != a) {
                    watch(a, b, now);
                }
            }
        }
        runtime.timer().newTimeout(t -> tick(), intervalMs, TimeUnit.MILLISECONDS);
    }

    private void watch(SimNetwork.Process a, SimNetwork.Process b, long now) {
        Map<String, Long> heard = lastHeard.computeIfAbsent(a.endpoint, k -> new HashMap<>());
        Map<String, Integer> incarnations = heardIncarnation.computeIfAbsent(a.endpoint, k -> new HashMap<>());
        Set<String> lost = reportedLost.computeIfAbsent(a.endpoint, k -> new HashSet<>());
        boolean answered = b.alive && network.connected(a.endpoint, b.endpoint)
                && network.random().nextDouble() >= network.faults().dropRate;
        if (answered) {
            Integer before = incarnations.put(b.endpoint, b.incarnation);
            boolean restarted = before != null && before != b.incarnation;
            boolean wasSilentOnly = silentOnly.computeIfAbsent(a.endpoint, k -> new HashSet<>()).remove(b.endpoint);
            if (lost.remove(b.endpoint)) {
                if (restarted && wasSilentOnly) {
                    report(a, l -> l.onConnectionLost(b.endpoint)); // it restarted while silent: lost, not only slow
                }
                report(a, l -> l.onConnectionRestored(b.endpoint));
            } else if (restarted) {
                report(a, l -> l.onConnectionLost(b.endpoint)); // restarted within the silence window
                report(a, l -> l.onConnectionRestored(b.endpoint));
            }
            heard.put(b.endpoint, now);
            return;
        }
        long last = heard.computeIfAbsent(b.endpoint, k -> now);
        if (now - last >= silenceMs && lost.add(b.endpoint)) {
            silentOnly.computeIfAbsent(a.endpoint, k -> new HashSet<>()).add(b.endpoint);
            report(a, l -> l.onPeerSilent(b.endpoint));
        }
    }

    private static void report(SimNetwork.Process at, Consumer<ConnectionListener> call) {
        List.copyOf(at.listeners).forEach(call);
    }
}
