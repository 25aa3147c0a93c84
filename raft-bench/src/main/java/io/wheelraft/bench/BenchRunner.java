package io.wheelraft.bench;

import io.wheelraft.example.HostCpu;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The side-by-side benchmark: for each system, three server processes on loopback (fresh data
 * directories, fsync on, the same election timeout and JVM options), a wait for a leader, a
 * warm-up, then the same closed-loop increment load at each in-flight count. Prints one line per
 * point and writes the table and charts (see {@link BenchReport}).
 *
 * <p>With {@code --rounds R} the whole pass is repeated R times, the systems taking turns in each
 * round (each round starting one system further along the list), and the report adds each round's ratios of the first system to the others and their
 * median (see {@link RoundsSummary}: this machine's speed drifts, and a ratio within one round
 * compares the systems under the same drift).
 *
 * <pre>
 * java -cp "raft-bench/target/classes:$(cat raft-bench/target/bench.classpath)" io.wheelraft.bench.BenchRunner \
 *     [--duration 30] [--rounds 1] [--warmup 40] [--settle 15] [--in-flight 1,16,128] [--systems wheelraft,jraft,ratis]
 *     [--election-timeout-ms 1000] [--counter-jar raft-example/target/wheelraft-counter.jar]
 *     [--docs docs | --no-docs] [--work-dir DIR] [--jfr [--jfr-settings profile|FILE.jfc]] [--cli-bench WARMUP_SECS]
 * java ... io.wheelraft.bench.BenchRunner --replot docs/benchmarks/cluster-comparison.md
 * </pre>
 *
 * Single-threaded driver; the loads run on the systems' client threads.
 */
public final class BenchRunner {

    private static final Logger LOG = LoggerFactory.getLogger(BenchRunner.class);

    /** The same for every system's servers: a fixed heap so none is starved or favoured by sizing. */
    static final List<String> SERVER_JVM_OPTIONS = List.of("-Xms512m", "-Xmx512m", "-XX:+UseG1GC");

    private int durationSecs = 30;
    private int rounds = 1;
    /**
     * 40 s: with 10 s the servers' C2 compiler threads were still busy (200-480 ms of CPU a second
     * each) through the first measured point, which put JIT stalls into its p99; with 20 s, on a
     * day with a fast disk, they still used about a core between the three servers through the
     * 1-in-flight point, which then measured a fifth to a quarter of its rate with 40 s.
     */
    private int warmupSecs = 40;
    private int settleSecs = 15;
    private List<Integer> inFlight = List.of(1, 16, 128);
    private List<String> systems = List.of("wheelraft", "jraft", "ratis");
    private int electionTimeoutMs = 1000;
    /** JFR settings for --jfr: a JDK preset name or a .jfc file (e.g. with a 1 ms sampling period). */
    private String jfrSettings = "profile";
    private Path counterJar = Path.of("raft-example/target/wheelraft-counter.jar");
    private Path docs = Path.of("docs");
    private Path workDir;
    private boolean jfr;
    /** Warm-up seconds of the command line's bench run after each WheelRaft point; null: not run. */
    private Integer cliBenchWarmupSecs;
    private CliBenchCheck cliBench;

    private BenchRunner() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        if (args.length == 2 && args[0].equals("--replot")) {
            // Redraw the charts from a table this runner wrote, e.g. after a chart style change.
            Path table = Path.of(args[1]);
            BenchReport.charts(BenchReport.parseTable(Files.readString(table, StandardCharsets.UTF_8)), table.getParent());
            return;
        }
        BenchRunner runner = new BenchRunner();
        runner.parse(args);
        runner.run(String.join(" ", args));
        System.exit(0); // client libraries leave non-daemon threads behind
    }

    private void parse(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--duration" -> durationSecs = positive(a, value(args, ++i, a));
                case "--rounds" -> rounds = positive(a, value(args, ++i, a));
                case "--warmup" -> warmupSecs = nonNegative(a, value(args, ++i, a));
                case "--settle" -> settleSecs = nonNegative(a, value(args, ++i, a));
                case "--in-flight" -> {
                    List<Integer> counts = new ArrayList<>();
                    for (String s : value(args, ++i, a).split(",")) {
                        counts.add(positive(a, s.trim()));
                    }
                    inFlight = List.copyOf(counts);
                }
                case "--systems" -> systems = List.of(value(args, ++i, a).split(","));
                case "--election-timeout-ms" -> electionTimeoutMs = positive(a, value(args, ++i, a));
                case "--counter-jar" -> counterJar = Path.of(value(args, ++i, a));
                case "--docs" -> docs = Path.of(value(args, ++i, a));
                case "--no-docs" -> docs = null;
                case "--work-dir" -> workDir = Path.of(value(args, ++i, a));
                case "--jfr" -> jfr = true;
                case "--cli-bench" -> cliBenchWarmupSecs = nonNegative(a, value(args, ++i, a));
                case "--jfr-settings" -> jfrSettings = value(args, ++i, a);
                default -> throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (systems.stream().anyMatch(s -> s.startsWith("wheelraft")) && !Files.isRegularFile(counterJar)) {
            throw new IllegalArgumentException("--counter-jar " + counterJar.toAbsolutePath() + " does not exist; build with "
                    + "mvn -B -q -Pcluster-bench -pl raft-bench -am package -DskipTests");
        }
        for (String s : systems) {
            BenchSystem.byKey(s, counterJar, electionTimeoutMs); // rejects unknown names before anything starts
        }
    }

    private void run(String argLine) throws Exception {
        Path work = workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("wheelraft-bench-");
        if (cliBenchWarmupSecs != null) {
            cliBench = new CliBenchCheck(counterJar, cliBenchWarmupSecs, durationSecs, work);
        }
        RoundsSummary summary = new RoundsSummary();
        Instant started = Instant.now();
        // Ratios are of the first listed system to each other one.
        String reference = BenchSystem.byKey(systems.get(0), counterJar, electionTimeoutMs).label();
        for (int round = 1; round <= rounds; round++) {
            // Each round starts with the next system, so none always runs first (after a pause) or
            // always right after the heaviest one (whose leftovers, such as dirty pages, slow the next).
            for (int turn = 0; turn < systems.size(); turn++) {
                String key = systems.get((turn + round - 1) % systems.size());
                BenchSystem system = BenchSystem.byKey(key, counterJar, electionTimeoutMs);
                Path dir = rounds == 1 ? work.resolve(system.key()) : work.resolve("round-" + round).resolve(system.key());
                measure(round, system, dir).forEach(summary::add);
            }
        }
        List<BenchResult> results = summary.combined();
        String facts = runFacts(argLine, started);
        String ratios = rounds == 1 || systems.size() < 2 ? ""
                : "Per round (" + rounds + " rounds, the systems taking turns in each), " + reference + " against each other system:\n\n"
                + summary.ratioTable(reference);
        System.out.println();
        System.out.println(facts);
        System.out.println();
        System.out.print(BenchReport.table(results));
        if (!ratios.isEmpty()) {
            System.out.println();
            System.out.print(ratios);
        }
        String cliTable = cliBench == null ? "" : cliBench.table();
        if (!cliTable.isEmpty()) {
            System.out.println();
            System.out.print(cliTable);
        }
        if (docs != null) {
            Path dir = docs.resolve("benchmarks");
            BenchReport.charts(results, dir);
            Files.writeString(dir.resolve("cluster-comparison.md"), "# Cluster benchmark: last run\n\n" + facts + "\n\n"
                    + BenchReport.table(results) + (ratios.isEmpty() ? "" : "\n" + ratios) + (cliTable.isEmpty() ? "" : "\n" + cliTable),
                    StandardCharsets.UTF_8);
            BenchReport.updateDocs(docs.resolve("benchmarks.md"), BenchReport.block(facts, results, ratios));
            System.out.println("\nwrote " + dir.resolve("cluster-comparison.md") + ", " + dir.resolve(BenchReport.THROUGHPUT_PNG) + ", "
                    + dir.resolve(BenchReport.P99_PNG) + " and the results block of " + docs.resolve("benchmarks.md"));
        }
        if (!jfr) {
            deleteDataDirs(work);
        } else {
            System.out.println("flight recordings kept under " + work);
        }
    }

    private List<RoundsSummary.Point> measure(int round, BenchSystem system, Path runDir) throws Exception {
        List<List<String>> extra = new ArrayList<>();
        if (jfr && system.key().startsWith("wheelraft")) {
            for (int i = 0; i < 3; i++) {
                extra.add(List.of("-XX:StartFlightRecording=settings=" + jfrSettings + ",dumponexit=true,filename=" + runDir.resolve("node" + i + ".jfr")));
            }
        }
        Files.createDirectories(runDir);
        List<RoundsSummary.Point> results = new ArrayList<>();
        System.out.printf(Locale.ROOT, "%s%s: starting 3 nodes under %s%n", rounds > 1 ? "round " + round + ", " : "", system.label(), runDir);
        try (ServerCluster cluster = ServerCluster.start(3, runDir, SERVER_JVM_OPTIONS, extra, system.command());
             CounterClient client = system.clients().apply(cluster.endpoints())) {
            long t0 = System.nanoTime();
            try {
                client.awaitLeader(Duration.ofSeconds(90));
            } catch (IllegalStateException e) {
                throw new IllegalStateException(system.label() + ": no leader (exited nodes: " + cluster.exited() + "; logs under " + runDir + ")", e);
            }
            System.out.printf(Locale.ROOT, "%s: leader acknowledged the first increment %.1f s after start; warming up %d s%n",
                    system.label(), (System.nanoTime() - t0) / 1e9, warmupSecs);
            if (warmupSecs > 0) {
                new ClosedLoopLoad(client, 16).run(0, warmupSecs * 1000L);
            }
            for (int n : inFlight) {
                double load = loadAverage();
                WindowSamples window = new WindowSamples(cluster);
                ClosedLoopLoad.Measurement m = new ClosedLoopLoad(client, n).run(settleSecs * 1000L, durationSecs * 1000L, window);
                double steal = window.stealPercent();
                RoundsSummary.Point point = new RoundsSummary.Point(round, system.label(), n, m, load, steal, window.serverCpuNanos());
                double cpuMicrosPerOp = point.serverCpuMicrosPerOp();
                BenchResult r = new BenchResult(system.label(), n, m.opsPerSecond(), m.percentileMillis(50), m.percentileMillis(99),
                        m.percentileMillis(99.9), m.acknowledged(), m.failed(), load, steal, cpuMicrosPerOp);
                results.add(point);
                System.out.printf(Locale.ROOT, "%s, %d in flight: %,.0f ops/s, %s, server CPU %.1f us/op (%d failed; load avg %.2f; CPU steal %.0f%%)%n",
                        system.label(), n, r.opsPerSecond(), latencies(r), cpuMicrosPerOp, r.failed(), load, steal);
                if (cliBench != null && system.key().equals("wheelraft")) {
                    // The client again after the command line, so that servers warming up (or the
                    // machine drifting) over the three windows favours neither.
                    CliBenchCheck.Measured cli = cliBench.run(cluster.endpoints(), n);
                    ClosedLoopLoad.Measurement after = new ClosedLoopLoad(client, n).run(settleSecs * 1000L, durationSecs * 1000L);
                    CliBenchCheck.Point c = cliBench.record(n, m, after, cli);
                    System.out.printf(Locale.ROOT, "  the command line's bench, %d in flight: %,.0f ops/s, p50 %.2f ms, p99 %.2f ms; the client after it %,.0f ops/s: "
                                    + "bench / client after %.2f%n", n, cli.opsPerSecond(), cli.p50Ms(), cli.p99Ms(), after.opsPerSecond(), c.ratio());
                }
            }
            if (!cluster.exited().isEmpty()) {
                LOG.warn("{}: nodes {} exited during the run; see {}", system.label(), cluster.exited(), runDir);
            }
        }
        return results;
    }

    private String runFacts(String argLine, Instant started) {
        return String.format(Locale.ROOT, "Run of %s UTC: `BenchRunner %s`; %d s measured per point%s after %d s warm-up (16 in flight) "
                        + "and %d s settling at each count; election timeout %d ms; server JVMs `%s`; %d cores, JDK %s; "
                        + "1-minute load average %.2f at the end.",
                started.truncatedTo(ChronoUnit.SECONDS), argLine.isEmpty() ? "(defaults)" : argLine, durationSecs,
                rounds == 1 ? "" : " in each of " + rounds + " rounds (" + rounds * durationSecs + " s in all; each system restarted per round)",
                warmupSecs, settleSecs,
                electionTimeoutMs, String.join(" ", SERVER_JVM_OPTIONS), Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), loadAverage());
    }

    /** "p50 X ms, p99 Y ms, p999 Z ms", or "latencies: none answered" for a window without one answer. */
    private static String latencies(BenchResult r) {
        if (Double.isNaN(r.p50Ms())) {
            return "latencies: " + BenchReport.NONE_ANSWERED;
        }
        return "p50 " + BenchReport.millis(r.p50Ms()) + " ms, p99 " + BenchReport.millis(r.p99Ms()) + " ms, p999 "
                + BenchReport.millis(r.p999Ms()) + " ms";
    }

    private static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** Deletes every node's data directory ({@code SYSTEM/nodeN/}), keeping the nodes' logs ({@code SYSTEM/nodeN.log}). */
    private static void deleteDataDirs(Path work) {
        try (Stream<Path> nodeDirs = Files.list(work).filter(Files::isDirectory).flatMap(BenchRunner::children).filter(Files::isDirectory)) {
            for (Path dir : nodeDirs.toList()) {
                try (Stream<Path> paths = Files.walk(dir)) {
                    for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        } catch (IOException e) {
            LOG.warn("could not clean {}: {}", work, e.toString());
        }
    }

    private static Stream<Path> children(Path dir) {
        try {
            return Files.list(dir).toList().stream();
        } catch (IOException e) {
            return Stream.empty();
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static int positive(String option, String v) {
        int n = parseInt(option, v);
        if (n <= 0) {
            throw new IllegalArgumentException(option + " must be positive, was " + v);
        }
        return n;
    }

    private static int nonNegative(String option, String v) {
        int n = parseInt(option, v);
        if (n < 0) {
            throw new IllegalArgumentException(option + " must be >= 0, was " + v);
        }
        return n;
    }

    private static int parseInt(String option, String v) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects a number, was '" + v + "'", e);
        }
    }
}
