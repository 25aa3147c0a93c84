package io.wheelraft.example;

import java.util.List;
import java.util.Locale;

/**
 * How {@code groups-bench} starts each server's JVM: its maximum heap and its garbage collector.
 * The collector is a choice because its pauses, not the number of groups as such, can decide
 * whether a many-group run settles: a pause longer than the election timeout makes the peers
 * report the process silent and campaign.
 */
record ServerJvm(String heap, Collector collector) {

    /** The collectors a run may choose, with the JVM options that select each. */
    enum Collector {
        /** Stop-the-world, one thread: nothing of its own competes with the servers for the cores between pauses. */
        SERIAL("-XX:+UseSerialGC"),
        /** Stop-the-world, a thread per core: shorter pauses when a core is free to help. */
        PARALLEL("-XX:+UseParallelGC"),
        /** Mostly concurrent old-generation marking, pauses aimed at a target. */
        G1("-XX:+UseG1GC");

        private final String option;

        Collector(String option) {
            this.option = option;
        }

        String displayName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The options, in order. For the two stop-the-world collectors "heap after GC" is then live
     * data only: by default their full collection leaves up to 5% of the old generation as dead
     * space (filled with placeholder int arrays) rather than move the objects after it, which at
     * 1,000 groups put 0.7 to 13 MB of nothing into one process's figure and not another's, more
     * than the replicas' own spread. G1 has no such option; it compacts what it collects.
     */
    List<String> options() {
        return collector == Collector.G1
                ? List.of("-Xmx" + heap, collector.option)
                : List.of("-Xmx" + heap, collector.option, "-XX:MarkSweepDeadRatio=0");
    }
}
