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
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The output of {@code groups-bench}: one row per group count, written as Markdown
 * ({@value #TABLE}: start-up and idle cost, then writes, then the kill) and charts: CPU
 * ({@value #CPU_CHART}) and memory ({@value #MEMORY_CHART}) against the group count, and, when the
 * kill phase ran, the time to a new leader ({@value #FAILOVER_CHART}). Stateless.
 */
final class GroupsBenchReport {

    static final String TABLE = "many-groups.md";
    static final String CPU_CHART = "many-groups-cpu.png";
    static final String MEMORY_CHART = "many-groups-memory.png";
    static final String FAILOVER_CHART = "many-groups-failover.png";
    /** The time every group the killed process led should have a new leader within. */
    static final long FAILOVER_TARGET_MS = 2_000;
    private static final double MIB = 1024.0 * 1024.0;

    private GroupsBenchReport() {
    }

    /** How the run was set up, for the table's introduction. */
    record Setup(String command, int electionTimeoutMs, ServerJvm jvm, int settleSecs, int quietWaitSecs, int windowSecs) {
    }

    /** One process's figures over the idle window (CPU) and at its end (the rest; {@code quiet} -1 if it did not answer). */
    record ProcessFigures(double cpuPercentOfCore, long rssBytes, long heapUsedBytes, long threads, long wheelEntries, int quiet) {
    }

    /**
     * The idle phase: {@code allQuiet} when every replica reported quiet before the window opened,
     * after {@code quietWaitMs} of waiting (else the wait ran out and idle was measured anyway).
     */
    record Idle(List<ProcessFigures> processes, boolean allQuiet, long quietWaitMs) {
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

    /** One measured load: acknowledged increments a second, latencies, the benchmark's own CPU, outcomes not acknowledged. */
    record Load(double opsPerSecond, double p50Ms, double p99Ms, double clientCpuPercent, long unknown, long failed) {
    }

    /** The write phase: {@code concurrency} outstanding to one group, then spread over {@code groupsWritten} groups. */
    record Writes(int groupsWritten, int concurrency, int windowSecs, Load spread, Load single) {
        /** Spread throughput over one group's: the target is at least 0.8. */
        double ratio() {
            return spread.opsPerSecond() / single.opsPerSecond();
        }
    }

    /**
     * The kill phase: process {@code victim} (0-based) led {@code victimLed} groups; a survivor
     * became leader of each of {@code failoverMs.length} of them that long after the kill by its own
     * record (sorted), and a poll saw each led {@code seenMs} after it (sorted); {@code unresolved}
     * were not seen led within {@code timeoutMs}.
     */
    record Kill(int victim, int victimLed, long[] failoverMs, long[] seenMs, int unresolved, long timeoutMs, long pollMs,
                LostWrites.Verdict writes, List<String> earlierRounds) {
        /** Nearest-rank percentile over all the victim's groups; -1 when it falls among the unresolved. */
        long percentile(double q) {
            return FailoverTimes.percentile(failoverMs, unresolved, q);
        }

        /** As {@link #percentile}, for the time until a poll saw the group led. */
        long seenPercentile(double q) {
            return FailoverTimes.percentile(seenMs, unresolved, q);
        }

        long withinTarget() {
            return FailoverTimes.countWithin(failoverMs, FAILOVER_TARGET_MS);
        }
    }

    /**
     * One group count. {@code allLedMs} is -1 when not every group had a leader by the deadline
     * ({@code leadersAtEnd} says how many did after the idle phase, or after the wait if it did not
     * run); {@code allHostedMs} -1 when the processes never all answered. A phase not run is null.
     */
    record Row(int groups, long allHostedMs, long allLedMs, int leadersAtEnd, Idle idle, Writes writes, Kill kill, double stealPercent) {
        /** A row without the host's CPU steal (not measured). */
        Row(int groups, long allHostedMs, long allLedMs, int leadersAtEnd, Idle idle, Writes writes, Kill kill) {
            this(groups, allHostedMs, allLedMs, leadersAtEnd, idle, writes, kill, Double.NaN);
        }
    }

    /** The spread throughput as a share of one group's; "n/a" when one group made nothing (a run whose groups were not led). */
    static String percentOfOne(Writes w) {
        return w.single().opsPerSecond() > 0 ? String.format(Locale.ROOT, "%.0f %%", 100 * w.ratio()) : "n/a";
    }

    /** One line for standard output as each count finishes. */
    static String summaryLine(Row r) {
        StringBuilder b = new StringBuilder().append(r.groups()).append(" groups: ")
                .append(r.allLedMs() < 0 ? "NOT all led (" + r.leadersAtEnd() + " leaders at the end)"
                        : String.format(Locale.ROOT, "all led %.1f s after start", r.allLedMs() / 1000.0));
        Idle idle = r.idle();
        if (idle != null) {
            b.append(String.format(Locale.ROOT, "; idle (%s) CPU %s %% of a core; RSS %s MiB; heap %s MiB; wheel entries %s; quiet %s",
                    idle.allQuiet() ? "all quiet" : "NOT all quiet", each(idle, p -> fmt(p.cpuPercentOfCore())),
                    each(idle, p -> fmt(p.rssBytes() / MIB)), each(idle, p -> fmt(p.heapUsedBytes() / MIB)),
                    each(idle, p -> Long.toString(p.wheelEntries())), each(idle, p -> Integer.toString(p.quiet()))));
        }
        Writes w = r.writes();
        if (w != null) {
            b.append(String.format(Locale.ROOT, "; writes one group %.0f ops/s, %d groups %.0f ops/s (%s)",
                    w.single().opsPerSecond(), w.groupsWritten(), w.spread().opsPerSecond(), percentOfOne(w)));
        }
        Kill k = r.kill();
        if (k != null) {
            b.append(String.format(Locale.ROOT, "; kill: %d of %d groups led again within %d s, p50/p99/max %s/%s/%s ms "
                            + "(seen by polling %s/%s/%s ms); lost acked %d of %d",
                    k.withinTarget(), k.victimLed(), FAILOVER_TARGET_MS / 1000, millis(k, k.percentile(0.50)), millis(k, k.percentile(0.99)),
                    millis(k, k.percentile(1.0)), millis(k, k.seenPercentile(0.50)), millis(k, k.seenPercentile(0.99)),
                    millis(k, k.seenPercentile(1.0)), k.writes().lostIncrements(), k.writes().acked()));
            if (!k.earlierRounds().isEmpty()) {
                b.append(" (the last of ").append(k.earlierRounds().size() + 1).append(" kills; before: ")
                        .append(String.join("; ", k.earlierRounds())).append(')');
            }
        }
        if (!Double.isNaN(r.stealPercent())) {
            b.append(String.format(Locale.ROOT, "; host CPU steal %.0f %% over the count's run", r.stealPercent()));
        }
        return b.toString();
    }

    /** Writes the table and the charts into {@code dir}; {@code baselineHeap} (null: not measured) is each process's heap with one group. */
    static void write(Path dir, Setup setup, List<Long> baselineHeap, List<Row> rows) throws IOException {
        Files.writeString(dir.resolve(TABLE), table(setup, baselineHeap, rows), StandardCharsets.UTF_8);
        List<Row> idle = rows.stream().filter(r -> r.idle() != null).toList();
        if (!idle.isEmpty()) {
            Files.write(dir.resolve(CPU_CHART), cpuChart(idle));
            Files.write(dir.resolve(MEMORY_CHART), memoryChart(idle));
        }
        List<Row> killed = rows.stream().filter(r -> r.kill() != null).toList();
        if (!killed.isEmpty()) {
            Files.write(dir.resolve(FAILOVER_CHART), failoverChart(killed));
        }
    }

    static String table(Setup setup, List<Long> baselineHeap, List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("Three `server --groups N` processes on one machine, each hosting one replica of every group (real gRPC and RocksDB, election timeout ")
                .append(setup.electionTimeoutMs()).append(" ms, `").append(String.join(" ", setup.jvm().options())).append("`).\n\n")
                .append("Command: `java -jar raft-example/target/wheelraft-counter.jar ").append(setup.command()).append("`\n\n");
        idleTable(b, setup, baselineHeap, rows);
        if (rows.stream().anyMatch(r -> r.writes() != null)) {
            writesTable(b, rows);
        }
        if (rows.stream().anyMatch(r -> r.kill() != null)) {
            killTable(b, rows);
        }
        List<String> steal = rows.stream().filter(r -> !Double.isNaN(r.stealPercent()))
                .map(r -> String.format(Locale.ROOT, "%,d groups %.0f %%", r.groups(), r.stealPercent())).toList();
        if (!steal.isEmpty()) {
            b.append("**Host.** The hypervisor's share of the host's CPU time (\"steal\" in `/proc/stat`) from the start of each count's ")
                    .append("processes to their stop: ").append(String.join(", ", steal))
                    .append(". Well above zero, the figures above measure a contended host.\n");
        }
        return b.toString();
    }

    private static void idleTable(StringBuilder b, Setup setup, List<Long> baselineHeap, List<Row> rows) {
        Double baseline = baselineHeap == null || baselineHeap.isEmpty() ? null
                : baselineHeap.stream().mapToLong(Long::longValue).average().orElse(Double.NaN) / MIB;
        b.append("**Start-up and idle.** \"All led\": from starting the processes until every group has a leader (polled at a hundredth of the time so far, every 100 ms to 1 s). ")
                .append("Idle is measured ").append(setup.settleSecs()).append(" s after that, once every replica reports quiet (`GroupsSummary.quiet`) ")
                .append("or, marked `not all quiet`, once ").append(setup.quietWaitSecs()).append(" s of waiting for that ran out; CPU over ")
                .append(setup.windowSecs()).append(" s from `/proc/PID/stat`, then quiet replicas, RSS, threads and timer-wheel entries of all three, then each one's heap after a full collection (`jcmd GC.run`; old generation and survivors, as eden then holds only what was allocated since). ")
                .append("Per process, `a / b / c` in the order started. ");
        if (baseline == null) {
            b.append("Heap per replica: not measured (no one-group baseline).\n\n");
        } else {
            b.append(String.format(Locale.ROOT, "Heap per replica = (mean heap after GC at N groups - %s MiB, the mean with 1 group: "
                    + "JVM, gRPC, RocksDB and one replica) / (N - 1); one-group heap per process %s MiB. Heap after GC varies by a few MiB "
                    + "between runs, so at small N this figure is noise.%n%n", fmt(baseline),
                    String.join(" / ", baselineHeap.stream().map(h -> fmt(h / MIB)).toList())));
        }
        b.append("| groups | all hosted (s) | all led (s) | leaders at end | idle measured | quiet at end | idle CPU (% of a core) | RSS (MiB) | heap used (MiB) | heap per replica (KiB) | threads | timer-wheel entries |\n")
                .append("|---:|---:|---:|---:|---|---|---|---|---|---:|---|---|\n");
        for (Row r : rows) {
            Idle i = r.idle();
            String led = r.allLedMs() < 0 ? "not all" : seconds(r.allLedMs());
            if (i == null) {
                b.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | not run | - | - | - | - | - | - | - |%n", r.groups(),
                        seconds(r.allHostedMs()), led, r.leadersAtEnd()));
                continue;
            }
            String perReplica = baseline == null || r.groups() <= 1 ? "-"
                    : String.format(Locale.ROOT, "%.1f", (i.meanHeapMib() - baseline) * 1024.0 / (r.groups() - 1));
            String measured = (i.allQuiet() ? "all quiet after " : "not all quiet after ") + seconds(i.quietWaitMs()) + " s";
            b.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.groups(),
                    seconds(r.allHostedMs()), led, r.leadersAtEnd(), measured, each(i, p -> p.quiet() < 0 ? "?" : Integer.toString(p.quiet())),
                    each(i, p -> fmt(p.cpuPercentOfCore())), each(i, p -> fmt(p.rssBytes() / MIB)), each(i, p -> fmt(p.heapUsedBytes() / MIB)),
                    perReplica, each(i, p -> Long.toString(p.threads())), each(i, p -> Long.toString(p.wheelEntries()))));
        }
    }

    private static void writesTable(StringBuilder b, List<Row> rows) {
        Writes first = rows.stream().map(Row::writes).filter(w -> w != null).findFirst().orElseThrow();
        b.append("\n**Writes.** Increments by one, ").append(first.concurrency()).append(" outstanding at once from this process ")
                .append("(one `RaftClient` per group written), each measured over ").append(first.windowSecs())
                .append(" s after one read per written group (so each client knows its leader) and a warm-up: all to group 0, then each to a random group ")
                .append("of those written (all groups, or a random sample of them). ")
                .append("Throughput counts increments acknowledged inside the window; \"spread / one\" is the target's ratio (at least 80 %). ")
                .append("\"Bench CPU\" is this process's own CPU over the window: each written group has a RaftClient here, all on one shared transport.\n\n")
                .append("| groups | groups written | one group (ops/s) | spread (ops/s) | spread / one | p99 one / spread (ms) | bench CPU one / spread (% of a core) | unknown / failed |\n")
                .append("|---:|---:|---:|---:|---:|---|---|---|\n");
        for (Row r : rows) {
            Writes w = r.writes();
            if (w == null) {
                continue;
            }
            b.append(String.format(Locale.ROOT, "| %d | %d | %.0f | %.0f | %s | %s / %s | %s / %s | %d / %d |%n", r.groups(), w.groupsWritten(),
                    w.single().opsPerSecond(), w.spread().opsPerSecond(), percentOfOne(w), fmt(w.single().p99Ms()), fmt(w.spread().p99Ms()),
                    fmt(w.single().clientCpuPercent()), fmt(w.spread().clientCpuPercent()),
                    w.single().unknown() + w.spread().unknown(), w.single().failed() + w.spread().failed()));
        }
    }

    private static void killTable(StringBuilder b, List<Row> rows) {
        Kill first = rows.stream().map(Row::kill).filter(k -> k != null).findFirst().orElseThrow();
        b.append("\n**Kill.** While increments go to random groups of those written, `kill -9` of the process leading the most groups. ")
                .append("For each group it led just before, the time from the kill until a survivor became its leader, by that server's ")
                .append("own record (`AdminService.LedGroups` with `with_since`; same host and clock as the kill), and until a poll of both ")
                .append("survivors every ").append(first.pollMs()).append(" ms saw it led (late by up to one poll and its round trip, ")
                .append("and by as long as a busy survivor takes to answer); percentiles are nearest-rank over all its groups, `> T` for ")
                .append("groups not seen led within the ")
                .append(first.timeoutMs() / 1000).append(" s limit. The writes go on a few seconds after; then every written group is read ")
                .append("(linearizably) and its growth since a read before the writes compared with the counts: \"lost\" increments are acknowledged ")
                .append("ones missing (growth below the acknowledged count), \"excess\" groups grew by more than acknowledged plus unknown.\n\n")
                .append("| groups | killed | groups it led | led again within ").append(FAILOVER_TARGET_MS / 1000)
                .append(" s | kill to leader p50 / p99 / max (ms) | kill to seen led p50 / p99 / max (ms) | groups written / checked | acknowledged | unknown | lost acknowledged | excess groups |\n")
                .append("|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            Kill k = r.kill();
            if (k == null) {
                continue;
            }
            LostWrites.Verdict v = k.writes();
            b.append(String.format(Locale.ROOT, "| %d | process %d | %d | %d | %s / %s / %s | %s / %s / %s | %d / %d | %d | %d | %d | %d |%n", r.groups(),
                    k.victim() + 1, k.victimLed(), k.withinTarget(), millis(k, k.percentile(0.50)), millis(k, k.percentile(0.99)),
                    millis(k, k.percentile(1.0)), millis(k, k.seenPercentile(0.50)), millis(k, k.seenPercentile(0.99)),
                    millis(k, k.seenPercentile(1.0)), v.groupsWritten(), v.groupsChecked(), v.acked(), v.unknown(), v.lostIncrements(), v.excessGroups()));
        }
        for (Row r : rows) {
            Kill k = r.kill();
            if (k != null && !k.earlierRounds().isEmpty()) {
                b.append(String.format(Locale.ROOT, "%nAt %d groups the table gives the last of %d kills of the same process (restarted after each, "
                        + "the cluster left to settle before the next); the earlier ones, kill to leader: %s.%n", r.groups(),
                        k.earlierRounds().size() + 1, String.join("; ", k.earlierRounds())));
            }
        }
    }

    private static String millis(Kill k, long ms) {
        return ms < 0 ? "> " + k.timeoutMs() / 1000 + " s" : Long.toString(ms);
    }

    private static String each(Idle idle, Function<ProcessFigures, String> f) {
        return String.join(" / ", idle.processes().stream().map(f).toList());
    }

    private static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v);
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

    /** Rows with an idle phase only. */
    static byte[] cpuChart(List<Row> rows) throws IOException {
        XYChart c = chart("Idle CPU per process", "% of one core");
        double[] x = rows.stream().mapToDouble(Row::groups).toArray();
        for (int i = 0; i < 3; i++) {
            int k = i;
            c.addSeries("process " + (i + 1), x, rows.stream().mapToDouble(r -> r.idle().processes().get(k).cpuPercentOfCore()).toArray());
        }
        return BitmapEncoder.getBitmapBytes(c, BitmapEncoder.BitmapFormat.PNG);
    }

    /** Rows with an idle phase only. */
    static byte[] memoryChart(List<Row> rows) throws IOException {
        XYChart c = chart("Memory per process (mean of three)", "MiB");
        double[] x = rows.stream().mapToDouble(Row::groups).toArray();
        c.addSeries("resident (RSS)", x, rows.stream().mapToDouble(r -> r.idle().meanRssMib()).toArray());
        c.addSeries("heap used after GC", x, rows.stream().mapToDouble(r -> r.idle().meanHeapMib()).toArray());
        return BitmapEncoder.getBitmapBytes(c, BitmapEncoder.BitmapFormat.PNG);
    }

    /** Rows with a kill phase only; a percentile beyond the time limit is left out of its series. */
    static byte[] failoverChart(List<Row> rows) throws IOException {
        XYChart c = chart("Kill -9 of one process: time until a survivor leads each of its groups", "ms");
        addResolved(c, "p50", rows, 0.50);
        addResolved(c, "p99", rows, 0.99);
        addResolved(c, "max", rows, 1.0);
        double[] x = rows.stream().mapToDouble(Row::groups).toArray();
        c.addSeries("target", x, rows.stream().mapToDouble(r -> FAILOVER_TARGET_MS).toArray());
        return BitmapEncoder.getBitmapBytes(c, BitmapEncoder.BitmapFormat.PNG);
    }

    private static void addResolved(XYChart c, String name, List<Row> rows, double q) {
        List<Row> resolved = rows.stream().filter(r -> r.kill().percentile(q) >= 0).toList();
        if (resolved.isEmpty()) {
            return;
        }
        ToDoubleFunction<Row> y = r -> r.kill().percentile(q);
        c.addSeries(name, resolved.stream().mapToDouble(Row::groups).toArray(), resolved.stream().mapToDouble(y).toArray());
    }
}
