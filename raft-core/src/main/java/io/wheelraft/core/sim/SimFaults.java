package io.wheelraft.core.sim;

/**
 * How unreliable the simulated network is. Mutable; change it between steps of a run.
 * Latencies are uniform in {@code [minLatencyMs, maxLatencyMs]} per message, so messages on one
 * path can overtake each other (reordering) whenever the range is wider than zero.
 */
public final class SimFaults {

    double dropRate;
    double duplicateRate;
    int minLatencyMs = 1;
    int maxLatencyMs = 3;
    /** How soon peers learn that a crashed process's connections broke. */
    int connectionBreakDetectMs = 1;
    /**
     * Whether a transport's probe after a break finds a killed process gone (its address refuses
     * a new connection, one round trip after the break is seen), as the gRPC transport's does.
     */
    boolean reportGonePeers = true;

    public SimFaults reportGonePeers(boolean v) {
        reportGonePeers = v;
        return this;
    }

    public SimFaults dropRate(double v) {
        if (v < 0 || v >= 1) {
            throw new IllegalArgumentException("dropRate must be in [0, 1), was " + v);
        }
        dropRate = v;
        return this;
    }

    public SimFaults duplicateRate(double v) {
        if (v < 0 || v >= 1) {
            throw new IllegalArgumentException("duplicateRate must be in [0, 1), was " + v);
        }
        duplicateRate = v;
        return this;
    }

    public SimFaults latencyMs(int min, int max) {
        if (min < 0 || max < min) {
            throw new IllegalArgumentException("latency range [" + min + ", " + max + "] is invalid");
        }
        minLatencyMs = min;
        maxLatencyMs = max;
        return this;
    }

    public SimFaults connectionBreakDetectMs(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("connectionBreakDetectMs must be >= 0, was " + v);
        }
        connectionBreakDetectMs = v;
        return this;
    }
}
