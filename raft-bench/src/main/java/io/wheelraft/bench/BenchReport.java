package io.wheelraft.bench;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a run's results: a markdown table, two PNG bar charts (ops/s and p99 per in-flight
 * count) and the generated block of the "Performance" section of docs/benchmarks.md, which sits
 * between two marker comments so the hand-written text around it survives a rerun.
 *
 * <p>Not thread-safe; used once at the end of a run.
 */
final class BenchReport {

    static final String BEGIN = "<!-- cluster-bench:results:begin (written by io.wheelraft.bench.BenchRunner) -->";
    static final String END = "<!-- cluster-bench:results:end -->";
    static final String SECTION = "## Performance: WheelRaft vs SOFAJRaft vs Ratis";
    static final String THROUGHPUT_PNG = "cluster-throughput.png";
    static final String P99_PNG = "cluster-p99.png";

    private BenchReport() {
    }

    static String table(List<BenchResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append("| system | in flight | ops/s | p50 ms | p99 ms | p999 ms | failed | load avg at start | CPU steal % | server CPU µs/op |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (BenchResult r : results) {
            sb.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %s | %d | %.2f | %s | %s |%n",
                    r.system(), r.inFlight(), r.opsPerSecond(), millis(r.p50Ms()), millis(r.p99Ms()), millis(r.p999Ms()),
                    r.failed(), r.loadBefore(), orDash(r.stealPercent(), "%.0f"), orDash(r.serverCpuMicrosPerOp(), "%,.1f")));
        }
        return sb.toString();
    }

    private static String orDash(double value, String format) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value);
    }

    /** Said instead of a latency when no request was both sent and answered inside the window. */
    static final String NONE_ANSWERED = "none answered";

    /**
     * A latency in milliseconds with two decimals, or {@link #NONE_ANSWERED} for the NaN that a
     * window without one answered request yields, so that a reader does not take "NaN" for a bug.
     */
    static String millis(double ms) {
        return Double.isNaN(ms) ? NONE_ANSWERED : String.format(Locale.ROOT, "%.2f", ms);
    }

    /** Writes both charts into {@code dir}. */
    static void charts(List<BenchResult> results, Path dir) throws IOException {
        Files.createDirectories(dir);
        chart(results, "Increments acknowledged per second (3 nodes, fsync on)", "ops/s", BenchResult::opsPerSecond, "#,##0",
                dir.resolve(THROUGHPUT_PNG));
        chart(results, "p99 latency of one increment", "ms", BenchResult::p99Ms, "#,##0.0", dir.resolve(P99_PNG));
    }

    private static void chart(List<BenchResult> results, String title, String yTitle, java.util.function.ToDoubleFunction<BenchResult> y,
                              String decimalPattern, Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(500).title(title)
                .xAxisTitle("requests in flight").yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setDecimalPattern(decimalPattern);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        Map<String, List<BenchResult>> bySystem = new LinkedHashMap<>();
        for (BenchResult r : results) {
            bySystem.computeIfAbsent(r.system(), k -> new ArrayList<>()).add(r);
        }
        for (Map.Entry<String, List<BenchResult>> e : bySystem.entrySet()) {
            List<String> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (BenchResult r : e.getValue()) {
                xs.add(Integer.toString(r.inFlight()));
                double v = y.applyAsDouble(r);
                ys.add(Double.isNaN(v) ? 0.0 : v);
            }
            chart.addSeries(e.getKey(), xs, ys);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Reads back a table written by {@link #table} (to redraw the charts of an earlier run). */
    static List<BenchResult> parseTable(String markdown) {
        List<BenchResult> results = new ArrayList<>();
        for (String line : markdown.split("\n")) {
            String[] cells = line.split("\\|");
            if (cells.length < 9 || !cells[2].trim().matches("\\d+")) {
                continue; // not a data row
            }
            results.add(new BenchResult(cells[1].trim(), Integer.parseInt(cells[2].trim()), number(cells[3]), number(cells[4]),
                    number(cells[5]), number(cells[6]), 0, (long) number(cells[7]), number(cells[8]),
                    optional(cells, 9), optional(cells, 10))); // older tables have no steal or CPU column
        }
        return results;
    }

    private static double optional(String[] cells, int i) {
        return cells.length > i && !cells[i].trim().equals("-") ? number(cells[i]) : Double.NaN;
    }

    private static double number(String cell) {
        String text = cell.trim();
        return text.equals(NONE_ANSWERED) ? Double.NaN : Double.parseDouble(text.replace(",", ""));
    }

    /** The generated block: run facts, the table and the charts (paths relative to docs/). */
    static String block(String runFacts, List<BenchResult> results) {
        return block(runFacts, results, "");
    }

    /** The generated block with {@code extra} markdown (e.g. per-round ratios) after the table. */
    static String block(String runFacts, List<BenchResult> results, String extra) {
        return BEGIN + "\n\n" + runFacts + "\n\n" + table(results) + "\n" + (extra.isEmpty() ? "" : extra + "\n")
                + "![ops/s per in-flight count](benchmarks/" + THROUGHPUT_PNG + ")\n"
                + "![p99 latency per in-flight count](benchmarks/" + P99_PNG + ")\n\n" + END;
    }

    /**
     * Puts {@code block} between the markers of docs/benchmarks.md, or appends the section with
     * the block if the markers are not there yet.
     */
    static void updateDocs(Path benchmarksMd, String block) throws IOException {
        String doc = Files.exists(benchmarksMd) ? Files.readString(benchmarksMd, StandardCharsets.UTF_8) : "# Benchmarks\n";
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        String updated;
        if (begin >= 0 && end > begin) {
            updated = doc.substring(0, begin) + block + doc.substring(end + END.length());
        } else {
            updated = doc + (doc.endsWith("\n") ? "\n" : "\n\n") + SECTION + "\n\n" + block + "\n";
        }
        Files.writeString(benchmarksMd, updated, StandardCharsets.UTF_8);
    }
}
