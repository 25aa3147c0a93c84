package io.wheelraft.example;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The output of {@code groups-bench}: one row per group count, written as a Markdown table
 * ({@value #TABLE}) and two charts, CPU ({@value #CPU_CHART}) and memory ({@value #MEMORY_CHART})
 * against the group count. Stateless.
 */
final class GroupsBenchReport {

    static final String TABLE = "many-groups.md";
    static final String CPU_CHART = "many-groups-cpu.png";
    static final String MEMORY_CHART = "many-groups-memory.png";
    private static final double MIB = 1024.0 * 1024.0;

    private GroupsBenchReport() {
    }

    /** One process's figures over the idle window (CPU) and at its end (memory, threads, wheel). */
    record ProcessFigures(double cpuPercentOfCore, long rssBytes, long heapUsedBytes, long threads, long wheelEntries) {
    }

    /**
     * One group count: three processes, each hosting one replica of every group. {@code allLedMs} is
     * -1 when not every group had a leader by the deadline ({@code leadersAtEnd} says how many did at
     * the end of the window); {@code allHostedMs} -1 when the processes never all answered.
     */
    record Row(int groups, long allHostedMs, long allLedMs, int leadersAtEnd, List<ProcessFigures> processes) {
        double meanCpu() {
            return processes.stream().mapToDouble(ProcessFigures::cpuPercentOfCore).average().orElse(Double.NaN);
        }

        double meanRssMib() {
            return processes.stream().mapToLong(ProcessFigures::rssBytes).average().orElse(Double.NaN) / MIB;
        }

        double meanHeapMib() {
            return processes.stream().mapToLong(ProcessFigures::heapUsedBytes).average().orElse(Double.NaN) / MIB;
        }
    }

    /** One line for standard output as each count finishes. */
    static String summaryLine(Row r) {
        return String.format(Locale.ROOT, "%d groups: %s; idle CPU %s %% of a core; RSS %s MiB; heap %s MiB; wheel entries %s",
                r.groups(), r.allLedMs() < 0 ? "NOT all led (" + r.leadersAtEnd() + " leaders at the end)" : String.format(Locale.ROOT, "all led %.1f s after start", r.allLedMs() / 1000.0),
                each(r, p -> fmt(p.cpuPercentOfCore())), each(r, p -> fmt(p.rssBytes() / MIB)),
                each(r, p -> fmt(p.heapUsedBytes() / MIB)), each(r, p -> Long.toString(p.wheelEntries())));
    }

    private static String each(Row r, java.util.function.Function<ProcessFigures, String> f) {
        return String.join(" / ", r.processes().stream().map(f).toList());
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v);
    }

    /** Writes the table and both charts into {@code dir}. */
    static void write(Path dir, String command, int electionTimeoutMs, int windowSecs, String heap, List<Row> rows) throws IOException {
        Files.writeString(dir.resolve(TABLE), table(command, electionTimeoutMs, windowSecs, heap, rows), StandardCharsets.UTF_8);
        Files.write(dir.resolve(CPU_CHART), cpuChart(rows));
        Files.write(dir.resolve(MEMORY_CHART), memoryChart(rows));
    }

    static String table(String command, int electionTimeoutMs, int windowSecs, String heap, List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("Three `server --groups N` processes on one machine, each hosting one replica of every group (real gRPC and RocksDB, election timeout ")
                .append(electionTimeoutMs).append(" ms, `-Xmx").append(heap).append(" -XX:+UseSerialGC`). Measured after every group had a leader (or, marked `not all`, once the wait for that ran out); CPU over ")
                .append(windowSecs).append(" s from `/proc/PID/stat`, heap after a full collection (`jcmd GC.run`). Per process, `a / b / c` in the order started.\n\n")
                .append("Command: `java -jar raft-example/target/wheelraft-counter.jar ").append(command).append("`\n\n")
                .append("| groups | all hosted (s) | all led (s) | leaders at end | idle CPU (% of a core) | RSS (MiB) | heap used (MiB) | heap per added group (KiB) | threads | timer-wheel entries |\n")
                .append("|---:|---:|---:|---:|---|---|---|---:|---|---|\n");
        Row previous = null;
        for (Row r : rows) {
            // The heap a process needs besides its groups (JVM, gRPC, RocksDB's Java side) is not a
            // replica's: the cost of one more group is the growth from the previous row.
            String perGroup = previous == null || previous.groups() >= r.groups() ? "-"
                    : String.format(Locale.ROOT, "%.1f", (r.meanHeapMib() - previous.meanHeapMib()) * 1024.0 / (r.groups() - previous.groups()));
            b.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | %s |%n", r.groups(), seconds(r.allHostedMs()),
                    r.allLedMs() < 0 ? "not all" : seconds(r.allLedMs()), r.leadersAtEnd(), each(r, p -> fmt(p.cpuPercentOfCore())), each(r, p -> fmt(p.rssBytes() / MIB)),
                    each(r, p -> fmt(p.heapUsedBytes() / MIB)), perGroup, each(r, p -> Long.toString(p.threads())),
                    each(r, p -> Long.toString(p.wheelEntries()))));
            previous = r;
        }
        return b.toString();
    }

    private static String seconds(long ms) {
        return ms < 0 ? "-" : String.format(Locale.ROOT, "%.1f", ms / 1000.0);
    }

    private static XYChart chart(String title, String yTitle) {
        XYChart c = new XYChartBuilder().width(800).height(500).title(title).xAxisTitle("groups (one replica of each per process)")
                .yAxisTitle(yTitle).build();
        c.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        return c;
    }

    static byte[] cpuChart(List<Row> rows) throws IOException {
        XYChart c = chart("Idle CPU per process (baseline: no quiescence, heartbeats per group)", "% of one core");
        double[] x = rows.stream().mapToDouble(Row::groups).toArray();
        for (int i = 0; i < 3; i++) {
            int k = i;
            c.addSeries("process " + (i + 1), x, rows.stream().mapToDouble(r -> r.processes().get(k).cpuPercentOfCore()).toArray());
        }
        return BitmapEncoder.getBitmapBytes(c, BitmapEncoder.BitmapFormat.PNG);
    }

    static byte[] memoryChart(List<Row> rows) throws IOException {
        XYChart c = chart("Memory per process (mean of three)", "MiB");
        double[] x = rows.stream().mapToDouble(Row::groups).toArray();
        c.addSeries("resident (RSS)", x, rows.stream().mapToDouble(Row::meanRssMib).toArray());
        c.addSeries("heap used after GC", x, rows.stream().mapToDouble(Row::meanHeapMib).toArray());
        return BitmapEncoder.getBitmapBytes(c, BitmapEncoder.BitmapFormat.PNG);
    }
}
