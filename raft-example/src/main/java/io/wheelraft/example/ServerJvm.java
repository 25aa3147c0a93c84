package io.wheelraft.example;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How {@code groups-bench} starts each server's JVM: its maximum heap, its garbage collector and
 * any further options given for the servers alone ({@code --server-jvm-option}, e.g. an AOT
 * cache or C1 only: unlike {@code JAVA_TOOL_OPTIONS} they leave the benchmark's own client JVM as
 * it is). The collector is a choice because its pauses, not the number of groups as such, can
 * decide whether a many-group run settles: a pause longer than the election timeout makes the
 * peers report the process silent and campaign.
 */
record ServerJvm(String heap, Collector collector, List<String> extra) {

    ServerJvm {
        extra = List.copyOf(extra);
        for (String option : extra) {
            if (!option.startsWith("-")) {
                throw new IllegalArgumentException("'" + option + "' is not a JVM option (they start with '-', e.g. -XX:TieredStopAtLevel=1)");
            }
        }
    }

    ServerJvm(String heap, Collector collector) {
        this(heap, collector, List.of());
    }

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
        List<String> options = new ArrayList<>(collector == Collector.G1
                ? List.of("-Xmx" + heap, collector.option)
                : List.of("-Xmx" + heap, collector.option, "-XX:MarkSweepDeadRatio=0"));
        options.addAll(extra); // last, so that one of them may override the defaults above
        return List.copyOf(options);
    }
}
