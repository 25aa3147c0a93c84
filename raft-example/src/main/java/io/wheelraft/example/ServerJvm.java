package io.wheelraft.example;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How {@code groups-bench} starts each server's JVM: its heap, its garbage collector, the
 * priorities of its threads, and any further options given for the servers alone
 * ({@code --server-jvm-option}, e.g. an AOT cache or C2 back: unlike {@code JAVA_TOOL_OPTIONS}
 * they leave the benchmark's own client JVM as it is; given last, they override the others).
 * The collector is a choice because its pauses, not the number of groups as such, can
 * decide whether a many-group run settles: a pause longer than the election timeout makes the
 * peers report the process silent and campaign.
 *
 * <p>The first two defaults (thread priorities, the whole heap from the start) exist because the
 * benchmark runs three servers on one small machine. A
 * stop-the-world pause ran several times longer than its work: the paused process's one
 * collector thread shared the cores with twenty and more runnable threads of the other two, and
 * at 100,000 groups young collections took 1.5-5.5 s, the peers reported the paused process
 * silent, and the start never settled. So the servers' Java threads run at nice 10 and the JVM's
 * own VM thread, which runs the serial collector's pauses, at its usual near-maximum priority
 * (nice -4): a pause then takes about as long as its work, as it does on a host of its own.
 * (Linux applies them for root only; otherwise the JVM warns and runs as before.) And the heap
 * is its full size from the start with a young generation of at most 512 MiB: a heap that grows
 * does so in full collections (2-3 s each at 100,000 groups), and a larger young generation
 * copies more of the many newly created groups per pause.
 *
 * <p>Where the kernel offers transparent huge pages ({@code hugePages}), the heap is put on them
 * ({@code -XX:+UseTransparentHugePages}), as the chaos runner's servers are. At 10,000 groups on
 * this machine every group was led 18-19 s after start against 25-26 s on 4 KiB pages (three
 * runs each, taking turns), and a killed server exited 89-128 ms after its signal against
 * 121-216 ms: its connections close, and the failover starts, only once the kernel has freed the
 * multi-gigabyte heap, page table by page table. ({@code --server-jvm-option=-XX:-UseTransparentHugePages}
 * undoes it.)
 *
 * <p>And C2 compiles every branch of a method, including those its profile never saw taken
 * ({@code -XX:PerMethodTrapLimit=0}, {@link #WHOLE_METHOD_COMPILES}), where by default it leaves
 * such branches out behind a trap that, once taken, discards the compiled method to be profiled
 * and compiled again. A failover takes many such branches at once (a broken connection, a
 * campaign after a break, a leadership won in the middle of writes), on survivors whose cores the
 * elections need. At 10,000 groups the first failover after a kill had p99 1.19-1.65 s (median
 * 1.42 s) with it against 1.49-1.81 s (1.65 s) without, six runs each taking turns
 * (benchmarks.md, "Killing a process"), at the same write throughput. The survivors' compilation logs did not show fewer recompilations
 * in the 8 s after the kill, so why it helps is not established; the figures are why it is on.
 * ({@code --server-jvm-option=-XX:PerMethodTrapLimit=100} undoes it.)
 *
 * <p>And the servers run C1 alone ({@code -XX:TieredStopAtLevel=1}, {@link #C1_ONLY}), as
 * docs/embedding.md advises for a process hosting many groups on few cores. A start or a failover
 * of thousands of groups runs much code for the first time, and with C2 its compiler took a third
 * of each server's CPU through a 100,000-group start and 30-45 % of the survivors' in the seconds
 * after a kill, competing with the elections. Taking turns on this machine, C1 alone led every one
 * of 100,000 groups 71-83 s after start against 88-117 s, and the first failover at 10,000 groups
 * had p99 1.32-1.90 s (every group within 2 s in five runs) against 1.86-3.80 s in six. It costs
 * peak throughput once everything is compiled (about a fifth of one group's), which the writes
 * phase, measured seconds after the start, does not reach. (With C1 alone the whole-method option
 * above has no effect; {@code --server-jvm-option=-XX:TieredStopAtLevel=4} restores C2 and with it.)
 */
record ServerJvm(String heap, Collector collector, List<String> extra, boolean hugePages) {

    /** The Java threads' nice value and the compiler threads' (the VM thread keeps the JVM's own, nice -4 under this policy). */
    static final List<String> THREAD_PRIORITIES = List.of("-XX:ThreadPriorityPolicy=1", "-XX:JavaPriority5_To_OSPriority=10",
            "-XX:CompilerThreadPriority=10");
    /** The heap on transparent huge pages (the kernel's madvise or always mode). */
    static final String HUGE_PAGES = "-XX:+UseTransparentHugePages";
    /** C2 compiles the branches its profile has not seen rather than trap and recompile when one is taken. */
    static final String WHOLE_METHOD_COMPILES = "-XX:PerMethodTrapLimit=0";
    /** The client compiler alone: no C2 compilations competing with a large start or failover. */
    static final String C1_ONLY = "-XX:TieredStopAtLevel=1";
    private static final long MAX_YOUNG_BYTES = 512L << 20;
    private static final Pattern HEAP_SIZE = Pattern.compile("(\\d{1,12})([kKmMgG]?)");

    ServerJvm {
        extra = List.copyOf(extra);
        for (String option : extra) {
            if (!option.startsWith("-")) {
                throw new IllegalArgumentException("'" + option + "' is not a JVM option (they start with '-', e.g. -XX:TieredStopAtLevel=1)");
            }
        }
    }

    ServerJvm(String heap, Collector collector, List<String> extra) {
        this(heap, collector, extra, false);
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
     * than the replicas' own spread. G1 has no such option; it compacts what it collects, and
     * sizes its young generation itself (a fixed one would turn that off).
     */
    List<String> options() {
        List<String> options = new ArrayList<>(List.of("-Xmx" + heap, "-Xms" + heap));
        if (collector == Collector.G1) {
            options.add(collector.option);
        } else {
            options.add("-Xmn" + (Math.min(MAX_YOUNG_BYTES, heapBytes(heap) / 4) >> 20) + "m");
            options.add(collector.option);
            options.add("-XX:MarkSweepDeadRatio=0");
        }
        if (hugePages) {
            options.add(HUGE_PAGES);
        }
        options.addAll(THREAD_PRIORITIES);
        options.add(WHOLE_METHOD_COMPILES);
        options.add(C1_ONLY);
        options.addAll(extra); // last, so that one of them may override the defaults above
        return List.copyOf(options);
    }

    /**
     * The nice value the servers' Java threads run at with these options: that of
     * {@code -XX:JavaPriority5_To_OSPriority} when {@code -XX:ThreadPriorityPolicy=1} is in effect
     * (the last of each option counts, as for the JVM), otherwise 0.
     */
    int javaThreadNice() {
        List<String> options = options();
        String policy = lastValue(options, "-XX:ThreadPriorityPolicy=");
        String nice = lastValue(options, "-XX:JavaPriority5_To_OSPriority=");
        if (!"1".equals(policy) || nice == null) {
            return 0;
        }
        try {
            return Integer.parseInt(nice);
        } catch (NumberFormatException e) {
            return 0; // the JVM refuses it at start, and says why
        }
    }

    private static String lastValue(List<String> options, String prefix) {
        String value = null;
        for (String option : options) {
            if (option.startsWith(prefix)) {
                value = option.substring(prefix.length());
            }
        }
        return value;
    }

    /**
     * A heap size as {@code -Xmx} takes it: a number of bytes, or of KiB, MiB or GiB with k, m or g
     * (either case). {@code groups-bench} checks {@code --heap} with it before building a ServerJvm.
     */
    static long heapBytes(String size) {
        Matcher m = HEAP_SIZE.matcher(size == null ? "" : size);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + size + "' is not a JVM heap size such as 2g or 512m");
        }
        long n = Long.parseLong(m.group(1));
        long bytes = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> n << 10;
            case "m" -> n << 20;
            case "g" -> n << 30;
            default -> n;
        };
        if (bytes < (64L << 20)) {
            throw new IllegalArgumentException("'" + size + "' is too small a heap for a server: give at least 64m");
        }
        return bytes;
    }
}
