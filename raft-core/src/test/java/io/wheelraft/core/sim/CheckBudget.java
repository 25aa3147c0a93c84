package io.wheelraft.core.sim;

import java.time.Duration;

/**
 * The wall-time budget of the simulations' linearizability checks: 20 s, or
 * {@code -Dwheelraft.sim.checkSecs=S}. A check that runs out of it ends {@code UNKNOWN}, which the
 * tests count as a failure; replaying that seed with a larger budget tells a violation from a
 * history that is only hard to search (many increments with an unknown outcome).
 */
final class CheckBudget {

    private CheckBudget() {
    }

    static Duration limit() {
        long secs = Long.getLong("wheelraft.sim.checkSecs", 20);
        if (secs < 1) {
            throw new IllegalArgumentException("wheelraft.sim.checkSecs must be at least 1, was " + secs);
        }
        return Duration.ofSeconds(secs);
    }
}
