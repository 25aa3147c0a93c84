package io.wheelraft.example;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The chaos report as one self-contained HTML page: inline CSS, the charts embedded as PNG data
 * URIs, no script and nothing fetched from the network, so it opens anywhere (also from a CI
 * artifact). Stateless and thread-safe.
 */
final class ChaosHtml {

    private static final String CSS = """
            body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:1240px;margin:1.5em auto;padding:0 1em;color:#222}
            h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
            table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
            th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
            th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
            .verdict{padding:.6em 1em;border-radius:4px;font-weight:600;margin:.8em 0}
            .pass{background:#e3f4e3;border:1px solid #5a5}.fail{background:#fbe3e3;border:1px solid #c55}
            .incomplete{background:#fff2d9;border:1px solid #d90}
            .ok{color:#1a7f1a;font-weight:600}.bad{color:#b21;font-weight:600}
            img.chart{width:100%;height:auto;border:1px solid #eee}
            .legend span{display:inline-block;margin-right:1.2em}.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em}
            pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap;font-size:.85em}
            """;

    private ChaosHtml() {
    }

    static String page(ChaosReport r, byte[] timelinePng, byte[] histogramPng) {
        ChaosRunner.Settings s = r.settings();
        ChaosReport.Measured m = r.measured();
        StringBuilder h = new StringBuilder(64 * 1024);
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>").append(esc(r.title())).append("</title>\n")
                .append("<style>").append(CSS).append("</style></head><body>\n");
        h.append("<h1>WheelRaft chaos run: ").append(esc(s.mode().label)).append("</h1>\n");
        String cls = !r.complete() ? "incomplete" : r.invariantsHold() ? "pass" : "fail";
        String text = !r.complete() ? "INCOMPLETE — " + m.incompleteReason() + ". What was measured until then follows; the run does not pass."
                : r.invariantsHold() ? "PASS — nothing acknowledged was lost or doubled, the history is linearizable"
                : "FAIL — " + failures(r);
        h.append("<div id=\"verdict\" class=\"verdict ").append(cls).append("\">").append(esc(text)).append("</div>\n");

        h.append("<h2>Run</h2>\n<table id=\"settings\">\n");
        kv(h, "mode", s.mode().label);
        kv(h, "rounds", s.mode() == ChaosRunner.Mode.NONE ? "— (fault-free, " + s.durationSecs() + " s of load)"
                : r.rounds().size() + " of " + s.rounds());
        kv(h, "link fault", r.linkLine());
        kv(h, "election timeout", s.electionTimeoutMs() + " ms");
        kv(h, "concurrent clients", Integer.toString(s.concurrency()));
        kv(h, "steady load before each fault", s.settleMs() + " ms");
        kv(h, "snapshot interval", s.snapshotIntervalSecs() + " s");
        kv(h, "wall time", String.format(Locale.ROOT, "%.1f s", m.seconds()));
        kv(h, "report written", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        h.append("</table>\n<table id=\"nodes\"><tr><th>node</th><th>address</th></tr>\n");
        m.nodes().entrySet().stream().sorted(Map.Entry.comparingByValue())
                .forEach(e -> h.append("<tr><td>").append(esc(e.getValue())).append("</td><td>").append(esc(e.getKey())).append("</td></tr>\n"));
        h.append("</table>\n");

        h.append("<h2>Verdicts</h2>\n<table id=\"verdicts\">\n");
        verdict(h, "run complete", r.complete(), r.complete() ? "yes" : "no: " + m.incompleteReason());
        verdict(h, "lost increments", r.finalValue() != null && r.lost() == 0, r.finalValue() == null ? "unknown (counter not read: "
                + m.readProblem() + ")" : Long.toString(r.lost()));
        verdict(h, "doubled increments", r.finalValue() != null && r.doubled() == 0, r.finalValue() == null ? "unknown" : Long.toString(r.doubled()));
        verdict(h, "linearizability", m.linearizability().linearizable(), r.verdictLine());
        for (Map.Entry<String, Boolean> t : r.targets().entrySet()) {
            verdict(h, t.getKey(), t.getValue(), t.getValue() ? "met" : "missed");
        }
        h.append("<tr><th>acknowledged / unknown / failed</th><td class=\"num\">").append(r.acked()).append(" / ").append(r.unknown())
                .append(" / ").append(m.failed()).append("</td></tr>\n");
        h.append("<tr><th>final value (linearizable read)</th><td class=\"num\">").append(r.finalValue() == null ? "—" : r.finalValue())
                .append("</td></tr>\n");
        h.append("<tr><th>elections (leaders after the first)</th><td class=\"num\">").append(m.elections()).append(" (terms advanced ")
                .append(m.termChanges()).append(", final term ").append(m.finalTerm()).append("; not explained by a fault ")
                .append(r.extraElections()).append(")</td></tr>\n");
        h.append("</table>\n");
        h.append("<p>Linearizability: every client call's invocation and return times were recorded and checked with WheelRaft's "
                + "linearizability checker against the counter model (increment returns the new value; the final read included). ")
                .append(esc(m.historyBound())).append(".</p>\n");
        if (m.linearizability().window() != null) {
            HistoryCheck.Window w = m.linearizability().window();
            h.append(String.format(Locale.ROOT, "<p class=\"bad\">Smallest failing window: the operations invoked from %.3f s until %.3f s "
                    + "(%d operations).</p>\n<pre>%s</pre>\n", w.fromSeconds(), w.toSeconds(), w.operations(), esc(w.explanation())));
        }

        h.append("<h2>Timeline</h2>\n<p class=\"legend\">").append(swatch(ChaosCharts.FAULT, "fault"))
                .append(swatch(ChaosCharts.LEADER, "new leader (first seen by the 20 ms status poll)"))
                .append(swatch(ChaosCharts.RECOVERY, "start / restart / caught up")).append("</p>\n");
        h.append(img("timeline", "acknowledged increments per 100 ms and latency percentiles over time", timelinePng));

        if (s.mode() != ChaosRunner.Mode.NONE) {
            h.append("<h2>Rounds</h2>\n<table id=\"measures\"><tr><th>measure</th><th>median</th><th>p90</th><th>max</th><th>n</th></tr>\n");
            for (Map.Entry<String, Stats> e : r.measures().entrySet()) {
                Stats st = e.getValue();
                h.append("<tr><td>").append(esc(e.getKey())).append("</td>").append(num(ChaosRunner.ms(st.median())))
                        .append(num(ChaosRunner.ms(st.p90()))).append(num(ChaosRunner.ms(st.max()))).append(num(Integer.toString(st.count())))
                        .append("</tr>\n");
            }
            // The fault column only where a mode describes its faults (which bytes were flipped...).
            boolean details = r.rounds().stream().anyMatch(x -> !x.detail().isEmpty());
            h.append("</table>\n<table id=\"rounds\"><tr><th>round</th><th>victim</th><th>new leader</th><th>term</th>"
                    + "<th>fault → new leader (ms)</th><th>fault → first ack (ms)</th><th>restart → caught up (ms)</th>"
                    + "<th>spawn → serving (ms)</th><th>result</th>").append(details ? "<th>fault</th>" : "").append("</tr>\n");
            for (ChaosRunner.Round x : r.rounds()) {
                h.append("<tr>").append(num(Integer.toString(x.number()))).append("<td>").append(esc(x.victim())).append("</td><td>")
                        .append(esc(x.newLeader())).append("</td>").append(num(Long.toString(x.newTerm())))
                        .append(num(ChaosReport.fixed(x.electionMs()))).append(num(ChaosReport.fixed(x.firstAckMs())))
                        .append(num(ChaosReport.fixed(x.catchUpMs()))).append(num(ChaosReport.fixed(x.servingMs())))
                        .append(x.failure().isEmpty() ? "<td class=\"ok\">ok</td>" : "<td class=\"bad\">" + esc(x.failure()) + "</td>")
                        .append(details ? "<td>" + esc(x.detail()) + "</td>" : "").append("</tr>\n");
            }
            h.append("</table>\n");
            h.append("<h2>Re-election</h2>\n")
                    .append(img("histogram", "histogram of fault to new leader and fault to first acknowledged write", histogramPng));
        }

        h.append("<h2>Events</h2>\n<details><summary>").append(m.events().size()).append(" events</summary>\n<table id=\"events\">"
                + "<tr><th>time (s)</th><th>kind</th><th>what</th></tr>\n");
        for (ChaosRecorder.Event e : m.events()) {
            h.append("<tr>").append(num(String.format(Locale.ROOT, "%.3f", e.seconds()))).append("<td>")
                    .append(e.kind().name().toLowerCase(Locale.ROOT)).append("</td><td>").append(esc(e.label())).append("</td></tr>\n");
        }
        h.append("</table></details>\n");
        if (!m.problems().isEmpty()) {
            h.append("<h2>First client answers other than ok</h2>\n<ul>\n");
            m.problems().forEach(p -> h.append("<li><code>").append(esc(p)).append("</code></li>\n"));
            h.append("</ul>\n");
        }
        h.append("<p>Also in this folder: report.json, report.md, timeline.png, histogram.png, servers/ (each node's data and log).</p>\n");
        h.append("</body></html>\n");
        return h.toString();
    }

    private static String img(String id, String alt, byte[] png) {
        if (png.length == 0) {
            return "<p class=\"bad\">The chart could not be drawn (see the runner's log).</p>\n";
        }
        return "<img id=\"" + id + "\" class=\"chart\" alt=\"" + esc(alt) + "\" src=\"data:image/png;base64,"
                + Base64.getEncoder().encodeToString(png) + "\">\n";
    }

    private static String failures(ChaosReport r) {
        List<String> f = new java.util.ArrayList<>();
        r.targets().forEach((k, v) -> {
            if (!v) {
                f.add(k);
            }
        });
        r.failedRounds().forEach(x -> f.add("round " + x.number() + ": " + x.failure()));
        return f.isEmpty() ? "an invariant does not hold" : "not met: " + String.join("; ", f);
    }

    private static void kv(StringBuilder h, String k, String v) {
        h.append("<tr><th>").append(esc(k)).append("</th><td>").append(esc(v)).append("</td></tr>\n");
    }

    private static void verdict(StringBuilder h, String k, boolean ok, String v) {
        h.append("<tr><th>").append(esc(k)).append("</th><td class=\"").append(ok ? "ok" : "bad").append("\">").append(esc(v))
                .append("</td></tr>\n");
    }

    private static String num(String v) {
        return "<td class=\"num\">" + esc(v) + "</td>";
    }

    private static String swatch(java.awt.Color c, String label) {
        return String.format(Locale.ROOT, "<span><span class=\"swatch\" style=\"background:#%02x%02x%02x\"></span>%s</span>", c.getRed(),
                c.getGreen(), c.getBlue(), esc(label));
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
