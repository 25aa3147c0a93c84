package io.wheelraft.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the counter's own command-line {@code bench} against the WheelRaft servers the runner
 * started, right after the runner's client measured the same in-flight count, so the two are
 * compared on the same servers in the same minutes (the command line is meant to report what the
 * library's client gets, within 10 %), and the client measured again after it. The command line
 * runs in a JVM of its own, started per point, so it gets its own warm-up before its window.
 */
final class CliBenchCheck {

    /** {@code bench}'s one result line: {@code N ops/s, p50 X ms, p99 Y ms, p999 Z ms}. */
    private static final Pattern RESULT = Pattern.compile("^([0-9.]+) ops/s, p50 ([0-9.]+) ms, p99 ([0-9.]+) ms");

    /** What the command line printed. */
    record Measured(double opsPerSecond, double p50Ms, double p99Ms) {
    }

    /** One point: the command line between two windows of the runner's client at the same in-flight count. */
    record Point(int inFlight, double clientOpsBefore, double clientOpsAfter, double clientP50, double clientP99, Measured cli) {
        /** The command line's throughput over the client's in the window right after it (the nearer in server warm-up). */
        double ratio() {
            return cli.opsPerSecond() / clientOpsAfter;
        }

        /**
         * The command line's throughput over the mean of the client's windows before and after it:
         * a drift of the machine or of the servers' warm-up that is steady over the three windows
         * cancels out, which neither one-sided ratio does.
         */
        double bracketedRatio() {
            return cli.opsPerSecond() / ((clientOpsBefore + clientOpsAfter) / 2);
        }
    }

    private final Path counterJar;
    private final int warmupSecs;
    private final int durationSecs;
    private final Path logDir;
    private final List<Point> points = new ArrayList<>();

    CliBenchCheck(Path counterJar, int warmupSecs, int durationSecs, Path logDir) {
        this.counterJar = counterJar;
        this.warmupSecs = warmupSecs;
        this.durationSecs = durationSecs;
        this.logDir = logDir;
    }

    /** Runs {@code bench --concurrency inFlight} against {@code endpoints} and returns its figures. */
    Measured run(List<String> endpoints, int inFlight) throws IOException, InterruptedException {
        Path out = logDir.resolve("cli-bench-" + inFlight + ".log");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", counterJar.toString(), "bench", "--peers", String.join(",", endpoints),
                "--concurrency", Integer.toString(inFlight), "--warmup", Integer.toString(warmupSecs),
                "--duration", Integer.toString(durationSecs))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(warmupSecs + durationSecs + 120L, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("the command line's bench did not finish in time; see " + out);
        }
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            Matcher m = RESULT.matcher(line);
            if (m.find()) {
                return new Measured(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)));
            }
        }
        throw new IllegalStateException("the command line's bench printed no result (exit " + p.exitValue() + "); see " + out);
    }

    /** Records a point: the client's window before the command line ran, the command line's, the client's after. */
    Point record(int inFlight, ClosedLoopLoad.Measurement before, ClosedLoopLoad.Measurement after, Measured cli) {
        Point point = new Point(inFlight, before.opsPerSecond(), after.opsPerSecond(), before.percentileMillis(50), before.percentileMillis(99), cli);
        points.add(point);
        return point;
    }

    /** The points so far as a Markdown table; empty if none. */
    String table() {
        if (points.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "The counter's command line (`bench`, a fresh JVM per point, %d s warm-up, %d s window) between two windows of the runner's client, on the same servers:%n%n"
                        + "| in flight | RaftClient ops/s (before / after) | `bench` ops/s | `bench` / client before | `bench` / client after | p50 ms (client before / `bench`) | p99 ms (client before / `bench`) |%n"
                        + "|---:|---|---:|---:|---:|---|---|%n", warmupSecs, durationSecs));
        for (Point p : points) {
            b.append(String.format(Locale.ROOT, "| %d | %,.0f / %,.0f | %,.0f | %.2f | %.2f | %.2f / %.2f | %.2f / %.2f |%n",
                    p.inFlight(), p.clientOpsBefore(), p.clientOpsAfter(), p.cli().opsPerSecond(),
                    p.cli().opsPerSecond() / p.clientOpsBefore(), p.ratio(),
                    p.clientP50(), p.cli().p50Ms(), p.clientP99(), p.cli().p99Ms()));
        }
        b.append(summary());
        return b.toString();
    }

    /**
     * With more than one point per in-flight count (a run of several rounds): per count, the
     * bracketed ratio ({@link Point#bracketedRatio()}) of every round and their median, the
     * figure the "within 10 %" target is read from; empty otherwise.
     */
    String summary() {
        Map<Integer, List<Double>> byInFlight = new TreeMap<>();
        for (Point p : points) {
            byInFlight.computeIfAbsent(p.inFlight(), k -> new ArrayList<>()).add(p.bracketedRatio());
        }
        if (byInFlight.values().stream().allMatch(r -> r.size() < 2)) {
            return "";
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "%n`bench` over the mean of the client's windows before and after it, per round, and the median over the rounds:%n%n"
                        + "| in flight | per round | median |%n|---:|---|---:|%n"));
        for (Map.Entry<Integer, List<Double>> e : byInFlight.entrySet()) {
            List<Double> ratios = e.getValue();
            b.append(String.format(Locale.ROOT, "| %d | %s | %.2f |%n", e.getKey(),
                    String.join(" / ", ratios.stream().map(r -> String.format(Locale.ROOT, "%.2f", r)).toList()), RoundsSummary.median(ratios)));
        }
        return b.toString();
    }
}
