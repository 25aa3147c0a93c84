package io.wheelraft.core.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs a simulation over seeds 1..N, where {@code -D<countProperty>=N} widens the sweep,
 * {@code -Dwheelraft.sim.firstSeed=F} moves it to F..F+N-1 (so a long soak can go on where an
 * earlier one stopped) and {@code -Dwheelraft.sim.seed=S} replays one seed; the first five failing
 * seeds are reported together, each with how to replay it.
 */
final class SeedSweep {

    private static final int MAX_FAILURES = 5;

    private SeedSweep() {
    }

    static void run(String countProperty, int defaultCount, LongConsumer runSeed) {
        String one = System.getProperty("wheelraft.sim.seed");
        long first = one != null ? Long.parseLong(one) : Long.getLong("wheelraft.sim.firstSeed", 1);
        long last = one != null ? first : first + Integer.getInteger(countProperty, defaultCount) - 1;
        List<String> failures = new ArrayList<>();
        for (long seed = first; seed <= last && failures.size() < MAX_FAILURES; seed++) {
            try {
                runSeed.accept(seed);
            } catch (AssertionError | RuntimeException e) {
                failures.add("seed " + seed + ": " + e.getMessage() + " (replay with -Dwheelraft.sim.seed=" + seed + ")");
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " seed(s) failed:\n" + String.join("\n", failures));
        }
    }
}
