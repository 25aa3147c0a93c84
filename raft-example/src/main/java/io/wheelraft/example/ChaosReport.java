package io.wheelraft.example;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The outcome of a chaos run: per-round timings, their percentiles, the invariant check (the
 * counter equals the acknowledged increments: none lost, none doubled), and the targets of the
 * issue with pass/miss. Writes {@code report.json}, {@code report.md}, {@code histogram.png} and
 * {@code report.html}. Immutable.
 */
final class ChaosReport {

    private final ChaosRunner.Settings settings;
    private final List<ChaosRunner.Round> rounds;
    private final long acked;
    private final long unknown;
    private final long failed;
    private final Long finalValue;
    private final String readProblem;
    private final List<String> problems;
    private final long elections;
    private final long finalTerm;
    private final double seconds;

    ChaosReport(ChaosRunner.Settings settings, List<ChaosRunner.Round> rounds, long acked, long unknown, long failed, Long finalValue,
                String readProblem, List<String> problems, long elections, long finalTerm, double seconds) {
        this.settings = settings;
        this.rounds = List.copyOf(rounds);
        this.acked = acked;
        this.unknown = unknown;
        this.failed = failed;
        this.finalValue = finalValue;
        this.readProblem = readProblem;
        this.problems = List.copyOf(problems);
        this.elections = elections;
        this.finalTerm = finalTerm;
        this.seconds = seconds;
    }

    Stats election() {
        return stat(ChaosRunner.Round::electionMs);
    }

    Stats firstAck() {
        return stat(ChaosRunner.Round::firstAckMs);
    }

    Stats catchUp() {
        return stat(ChaosRunner.Round::catchUpMs);
    }

    Stats serving() {
        return stat(ChaosRunner.Round::servingMs);
    }

    Stats stepDown() {
        return stat(ChaosRunner.Round::stepDownMs);
    }

    private Stats stat(ToDoubleFunction<ChaosRunner.Round> f) {
        return Stats.of(rounds.stream().map(r -> f.applyAsDouble(r)).toList());
    }

    long lost() {
        return finalValue == null ? -1 : Math.max(0, acked - finalValue);
    }

    /** Applied beyond what was acknowledged or may have been (unknown outcomes): a double application. */
    long doubled() {
        return finalValue == null ? -1 : Math.max(0, finalValue - acked - unknown);
    }

    long victimAcksAfterLease() {
        return rounds.stream().mapToLong(ChaosRunner.Round::victimAcksAfterLease).sum();
    }

    /** The safety checks: nothing lost or doubled, the value readable, no stale leader's acknowledgement; no election when fault-free. */
    boolean invariantsHold() {
        return finalValue != null && lost() == 0 && doubled() == 0 && victimAcksAfterLease() == 0
                && (settings.mode() != ChaosRunner.Mode.NONE || elections == 0);
    }

    /** The performance targets for this mode and election timeout: name → met. */
    Map<String, Boolean> targets() {
        Map<String, Boolean> t = new LinkedHashMap<>();
        int et = settings.electionTimeoutMs();
        switch (settings.mode()) {
            case KILL_LEADER -> {
                if (et == 1000) {
                    t.put("median kill → new leader ≤ 400 ms", election().median() <= 400);
                    t.put("p90 kill → new leader ≤ 600 ms", election().p90() <= 600);
                    t.put("median kill → first acknowledged write ≤ 600 ms", firstAck().median() <= 600);
                } else if (et == 150) {
                    t.put("median kill → new leader ≤ 150 ms", election().median() <= 150);
                }
                t.put("median restart → caught up ≤ 3 s", catchUp().median() <= 3000);
            }
            case PAUSE_LEADER -> {
                if (et == 1000) {
                    t.put("median stop → new leader ≤ 1.5 s", election().median() <= 1500);
                }
                t.put("paused leader acknowledges nothing after its lease expired", victimAcksAfterLease() == 0);
            }
            case KILL_FOLLOWER, RESTART_ALL -> t.put("median restart → caught up ≤ 3 s", catchUp().median() <= 3000);
            case NONE -> t.put("zero elections under load", elections == 0);
        }
        t.put("zero lost and zero doubled increments", finalValue != null && lost() == 0 && doubled() == 0);
        return t;
    }

    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.json"), json(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        byte[] png = histogramPng();
        Files.write(dir.resolve("histogram.png"), png);
        Files.writeString(dir.resolve("report.html"), html(png), StandardCharsets.UTF_8);
    }

    /** One paragraph for the terminal. */
    String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "chaos %s: %d rounds, election timeout %d ms, %.0f s%n", settings.mode().label,
                rounds.size(), settings.electionTimeoutMs(), seconds));
        if (settings.mode() != ChaosRunner.Mode.NONE) {
            sb.append("  fault -> new leader:        ").append(line(election())).append('\n');
            sb.append("  fault -> first acked write: ").append(line(firstAck())).append('\n');
            sb.append("  restart -> caught up:       ").append(line(catchUp())).append('\n');
            sb.append("    of which spawn -> serving: ").append(line(serving())).append('\n');
            if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
                sb.append("  resume -> stepped down:     ").append(line(stepDown())).append('\n');
                sb.append("  acks by the paused leader after its lease: ").append(victimAcksAfterLease()).append('\n');
            }
        } else {
            sb.append("  elections: ").append(elections).append('\n');
        }
        sb.append(String.format(Locale.ROOT, "  increments: %d acknowledged, %d unknown, %d failed; final value %s; lost %d, doubled %d%n",
                acked, unknown, failed, finalValue == null ? "unreadable (" + readProblem + ")" : finalValue, lost(), doubled()));
        targets().forEach((k, v) -> sb.append("  ").append(v ? "met   " : "MISSED").append(' ').append(k).append('\n'));
        sb.append("  invariants: ").append(invariantsHold() ? "hold" : "VIOLATED");
        return sb.toString();
    }

    private static String line(Stats s) {
        if (s.count() == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "median %s, p90 %s, max %s (n=%d)", ChaosRunner.ms(s.median()), ChaosRunner.ms(s.p90()),
                ChaosRunner.ms(s.max()), s.count());
    }

    String json() {
        StringBuilder sb = new StringBuilder("{\n");
        sb.append("  \"mode\": ").append(str(settings.mode().label)).append(",\n");
        sb.append("  \"electionTimeoutMs\": ").append(settings.electionTimeoutMs()).append(",\n");
        sb.append("  \"concurrency\": ").append(settings.concurrency()).append(",\n");
        sb.append("  \"roundsRequested\": ").append(settings.rounds()).append(",\n");
        sb.append("  \"seconds\": ").append(num(seconds)).append(",\n");
        sb.append("  \"rounds\": [\n");
        for (int i = 0; i < rounds.size(); i++) {
            ChaosRunner.Round r = rounds.get(i);
            sb.append("    {\"round\": ").append(r.number()).append(", \"victim\": ").append(str(r.victim()))
                    .append(", \"newLeader\": ").append(str(r.newLeader())).append(", \"newTerm\": ").append(r.newTerm())
                    .append(", \"electionMs\": ").append(num(r.electionMs())).append(", \"firstAckMs\": ").append(num(r.firstAckMs()))
                    .append(", \"catchUpMs\": ").append(num(r.catchUpMs())).append(", \"servingMs\": ").append(num(r.servingMs())).append(", \"stepDownMs\": ").append(num(r.stepDownMs()))
                    .append(", \"victimAcksAfterLease\": ").append(r.victimAcksAfterLease()).append('}')
                    .append(i + 1 < rounds.size() ? ",\n" : "\n");
        }
        sb.append("  ],\n");
        sb.append("  \"electionMs\": ").append(stats(election())).append(",\n");
        sb.append("  \"firstAckMs\": ").append(stats(firstAck())).append(",\n");
        sb.append("  \"catchUpMs\": ").append(stats(catchUp())).append(",\n");
        sb.append("  \"servingMs\": ").append(stats(serving())).append(",\n");
        sb.append("  \"stepDownMs\": ").append(stats(stepDown())).append(",\n");
        sb.append("  \"elections\": ").append(elections).append(",\n");
        sb.append("  \"finalTerm\": ").append(finalTerm).append(",\n");
        sb.append("  \"acknowledged\": ").append(acked).append(",\n");
        sb.append("  \"unknown\": ").append(unknown).append(",\n");
        sb.append("  \"failed\": ").append(failed).append(",\n");
        sb.append("  \"finalValue\": ").append(finalValue == null ? "null" : finalValue.toString()).append(",\n");
        sb.append("  \"lost\": ").append(lost()).append(",\n");
        sb.append("  \"doubled\": ").append(doubled()).append(",\n");
        sb.append("  \"victimAcksAfterLease\": ").append(victimAcksAfterLease()).append(",\n");
        sb.append("  \"targets\": {");
        List<String> t = new ArrayList<>();
        targets().forEach((k, v) -> t.add(str(k) + ": " + v));
        sb.append(String.join(", ", t)).append("},\n");
        sb.append("  \"clientProblems\": [");
        sb.append(String.join(", ", problems.stream().map(ChaosReport::str).toList())).append("],\n");
        sb.append("  \"invariantsHold\": ").append(invariantsHold()).append('\n');
        sb.append("}\n");
        return sb.toString();
    }

    private static String stats(Stats s) {
        return "{\"count\": " + s.count() + ", \"min\": " + num(s.min()) + ", \"median\": " + num(s.median()) + ", \"p90\": " + num(s.p90())
                + ", \"p99\": " + num(s.p99()) + ", \"max\": " + num(s.max()) + "}";
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.1f", v);
    }

    static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Chaos run: ").append(settings.mode().label).append("\n\n");
        sb.append(String.format(Locale.ROOT, "%d rounds, election timeout %d ms, %d concurrent clients, %.0f s.%n%n",
                rounds.size(), settings.electionTimeoutMs(), settings.concurrency(), seconds));
        if (settings.mode() != ChaosRunner.Mode.NONE) {
            sb.append("| measure | median | p90 | max | n |\n|---|---|---|---|---|\n");
            row(sb, "fault → new leader", election());
            row(sb, "fault → first acknowledged write", firstAck());
            row(sb, "restart (or resume) → caught up", catchUp());
            row(sb, "restart → restarted node answers (JVM start, storage open)", serving());
            if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
                row(sb, "resume → old leader stepped down", stepDown());
            }
            sb.append("\n| round | victim | new leader | term | new leader (ms) | first ack (ms) | caught up (ms) |\n|---|---|---|---|---|---|---|\n");
            for (ChaosRunner.Round r : rounds) {
                sb.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | %s | %s | %s |%n", r.number(), r.victim(), r.newLeader(), r.newTerm(),
                        num(r.electionMs()), num(r.firstAckMs()), num(r.catchUpMs())));
            }
        } else {
            sb.append("Elections during the run: ").append(elections).append("\n");
        }
        sb.append(String.format(Locale.ROOT, "%nIncrements: %d acknowledged, %d unknown, %d failed. Final value (linearizable read): %s. "
                + "Lost: %d. Doubled: %d.%n", acked, unknown, failed, finalValue == null ? "unreadable" : finalValue, lost(), doubled()));
        if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
            sb.append("Increments acknowledged by a paused leader after its lease expired: ").append(victimAcksAfterLease()).append(".\n");
        }
        sb.append("\n| target | result |\n|---|---|\n");
        targets().forEach((k, v) -> sb.append("| ").append(k).append(" | ").append(v ? "met" : "**missed**").append(" |\n"));
        sb.append("\nInvariants: ").append(invariantsHold() ? "hold" : "**VIOLATED**").append(".\n");
        if (!problems.isEmpty()) {
            sb.append("\nFirst client answers other than ok:\n\n");
            problems.forEach(p -> sb.append("- `").append(p).append("`\n"));
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String name, Stats s) {
        sb.append("| ").append(name).append(" | ").append(ChaosRunner.ms(s.median())).append(" | ").append(ChaosRunner.ms(s.p90()))
                .append(" | ").append(ChaosRunner.ms(s.max())).append(" | ").append(s.count()).append(" |\n");
    }

    /** A histogram of the per-round timings, one series per measure, in bins of equal width. */
    byte[] histogramPng() throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(500)
                .title("Chaos " + settings.mode().label + " (election timeout " + settings.electionTimeoutMs() + " ms, " + rounds.size() + " rounds)")
                .xAxisTitle("milliseconds (bin upper bound)").yAxisTitle("rounds").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setOverlapped(false);
        chart.getStyler().setXAxisLabelRotation(45);
        Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("fault → new leader", values(ChaosRunner.Round::electionMs));
        series.put("fault → first ack", values(ChaosRunner.Round::firstAckMs));
        series.put("restart → caught up", values(ChaosRunner.Round::catchUpMs));
        double max = series.values().stream().flatMap(List::stream).mapToDouble(Double::doubleValue).max().orElse(1);
        int bins = 20;
        double width = niceWidth(max / bins);
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < bins; i++) {
            labels.add(String.format(Locale.ROOT, "%.0f", (i + 1) * width));
        }
        boolean any = false;
        for (Map.Entry<String, List<Double>> e : series.entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            List<Integer> counts = new ArrayList<>();
            for (int i = 0; i < bins; i++) {
                counts.add(0);
            }
            for (double v : e.getValue()) {
                int b = (int) Math.min(bins - 1, Math.floor(v / width));
                counts.set(b, counts.get(b) + 1);
            }
            chart.addSeries(e.getKey(), labels, counts);
            any = true;
        }
        if (!any) {
            chart.addSeries("no measurements", labels, labels.stream().map(l -> 0).toList());
        }
        return BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
    }

    private List<Double> values(ToDoubleFunction<ChaosRunner.Round> f) {
        return rounds.stream().map(r -> f.applyAsDouble(r)).filter(d -> !d.isNaN()).toList();
    }

    private static double niceWidth(double raw) {
        double[] steps = {1, 2, 5};
        double scale = 1;
        while (true) {
            for (double s : steps) {
                if (s * scale >= raw) {
                    return s * scale;
                }
            }
            scale *= 10;
        }
    }

    String html(byte[] png) {
        String md = markdown().replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>WheelRaft chaos: " + settings.mode().label + "</title>\n"
                + "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}pre{background:#f6f6f6;padding:1em;overflow:auto}</style>"
                + "</head><body>\n<h1>WheelRaft chaos run: " + settings.mode().label + "</h1>\n"
                + "<img alt=\"histogram of the timings\" src=\"data:image/png;base64," + Base64.getEncoder().encodeToString(png) + "\">\n"
                + "<pre>" + md + "</pre>\n</body></html>\n";
    }
}
