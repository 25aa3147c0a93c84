package io.wheelraft.example;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * The outcome of a chaos run: the settings, per-round timings and their percentiles, the timeline
 * of the run, the invariant checks (the counter equals the acknowledged increments: none lost,
 * none doubled; the client history is linearizable) and the targets of the issue with pass/miss.
 * A report of a run cut short (timeout, error, Ctrl-C) says so and never passes. Writes
 * {@code report.json}, {@code report.md}, {@code timeline.png}, {@code histogram.png} and a
 * self-contained {@code report.html}. Immutable.
 */
final class ChaosReport {

    /**
     * Everything a run measured.
     *
     * @param elections        leaders elected after the first one (from the cluster watch)
     * @param termChanges      terms the cluster went through after the first leader's
     * @param nodes            node name (n1..) → address
     * @param historyBound     how the linearizability check was bounded, for the report
     * @param incompleteReason why the run was cut short, or null when it completed
     * @param links            what the link fault did (nft counters, relay totals), or null without one or when unread
     */
    record Measured(List<ChaosRunner.Round> rounds, long acked, long unknown, long failed, Long finalValue, String readProblem,
                    List<String> problems, int elections, long termChanges, long finalTerm, double seconds, Map<String, String> nodes,
                    List<ChaosRecorder.Event> events, List<ChaosRecorder.Bucket> buckets, HistoryCheck.Verdict linearizability,
                    String historyBound, String incompleteReason, LinkFaults.Totals links) {
        Measured(List<ChaosRunner.Round> rounds, long acked, long unknown, long failed, Long finalValue, String readProblem,
                 List<String> problems, int elections, long termChanges, long finalTerm, double seconds, Map<String, String> nodes,
                 List<ChaosRecorder.Event> events, List<ChaosRecorder.Bucket> buckets, HistoryCheck.Verdict linearizability,
                 String historyBound, String incompleteReason) {
            this(rounds, acked, unknown, failed, finalValue, readProblem, problems, elections, termChanges, finalTerm, seconds, nodes, events,
                    buckets, linearizability, historyBound, incompleteReason, null);
        }
    }

    private final ChaosRunner.Settings settings;
    private final Measured m;
    private final List<ChaosRunner.Round> rounds;
    private final long acked;
    private final long unknown;
    private final Long finalValue;

    ChaosReport(ChaosRunner.Settings settings, Measured measured) {
        this.settings = settings;
        this.m = measured;
        this.rounds = List.copyOf(measured.rounds());
        this.acked = measured.acked();
        this.unknown = measured.unknown();
        this.finalValue = measured.finalValue();
    }

    boolean complete() {
        return m.incompleteReason() == null;
    }

    Measured measured() {
        return m;
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

    /** isolate-leader: the cut → the isolated leader stopped leading, from its own log. */
    Stats ownStepDown() {
        return stat(ChaosRunner.Round::ownStepDownMs);
    }

    /** New leader → first acknowledged write: how long the clients took to find the new leader and be answered. */
    Stats leaderToFirstAck() {
        return stat(r -> r.firstAckMs() - r.electionMs());
    }

    /**
     * Elections the faults do not explain: those counted beyond one per round in the modes whose
     * fault replaces the leader (all of them in {@code none}, {@code kill-follower} and
     * {@code corrupt-follower}); each extra one is a leader change nothing forced.
     */
    long extraElections() {
        int perRound = switch (settings.mode()) {
            case KILL_LEADER, PAUSE_LEADER, ISOLATE_LEADER, RESTART_ALL, DISK_FULL -> 1;
            case KILL_FOLLOWER, CORRUPT_FOLLOWER, NONE -> 0;
        };
        return Math.max(0, m.elections() - (long) perRound * rounds.size());
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

    /** Rounds in which the fault was not handled as it must be (e.g. a damaged node never repaired). */
    List<ChaosRunner.Round> failedRounds() {
        return rounds.stream().filter(r -> !r.failure().isEmpty()).toList();
    }

    /**
     * The safety checks: the run completed, nothing lost or doubled, the value readable, the history
     * linearizable, no stale leader's acknowledgement, every round's fault handled; no election when
     * fault-free.
     */
    boolean invariantsHold() {
        return complete() && finalValue != null && lost() == 0 && doubled() == 0 && victimAcksAfterLease() == 0
                && m.linearizability().linearizable() && failedRounds().isEmpty()
                && (settings.mode() != ChaosRunner.Mode.NONE || (m.elections() == 0 && m.termChanges() == 0));
    }

    /** The performance targets for this mode and election timeout: name → met. */
    Map<String, Boolean> targets() {
        Map<String, Boolean> t = new LinkedHashMap<>();
        int et = settings.electionTimeoutMs();
        switch (settings.mode()) {
            case KILL_LEADER -> {
                if (et == 1000) {
                    // Issue #23's floor: the broken connection is known ~20 ms after the kill.
                    t.put("median kill → new leader ≤ 100 ms", election().median() <= 100);
                    t.put("p90 kill → new leader ≤ 150 ms", election().p90() <= 150);
                    t.put("median kill → first acknowledged write ≤ 150 ms", firstAck().median() <= 150);
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
            case ISOLATE_LEADER -> {
                if (et == 1000) {
                    t.put("median isolate → new leader ≤ 1,100 ms", election().median() <= 1100);
                }
                t.put("median new leader → first acknowledged write ≤ 100 ms", leaderToFirstAck().median() <= 100);
                t.put("isolated leader acknowledges nothing invoked after its lease expired", victimAcksAfterLease() == 0);
                t.put("after the heal the old leader stepped down and caught up, in every requested round",
                        rounds.size() == settings.rounds() && rounds.stream().noneMatch(r -> Double.isNaN(r.catchUpMs())));
            }
            case KILL_FOLLOWER, RESTART_ALL -> t.put("median restart → caught up ≤ 3 s", catchUp().median() <= 3000);
            case CORRUPT_FOLLOWER -> t.put("every damaged follower repaired from the cluster, in every requested round",
                    failedRounds().isEmpty() && rounds.size() == settings.rounds());
            case DISK_FULL -> t.put("the others served throughout, every full follower stopped or kept serving without a failed write, and rejoined once freed, in every requested round",
                    failedRounds().isEmpty() && rounds.size() == settings.rounds());
            case NONE -> t.put("zero elections under load", m.elections() == 0 && m.termChanges() == 0);
        }
        t.put("zero lost and zero doubled increments", finalValue != null && lost() == 0 && doubled() == 0);
        t.put("the client history is linearizable", m.linearizability().linearizable());
        return t;
    }

    String title() {
        return "Chaos " + settings.mode().label + (settings.witness() ? " (2 data + witness)" : "") + ", election timeout " + settings.electionTimeoutMs() + " ms, " + rounds.size()
                + (settings.mode() == ChaosRunner.Mode.NONE ? " rounds" : " of " + settings.rounds() + " rounds")
                + (settings.links().any() ? ", " + settings.links().describe() : "")
                + (complete() ? "" : " (INCOMPLETE)");
    }

    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.json"), json(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        byte[] timeline = new byte[0];
        byte[] histogram = new byte[0];
        try {
            timeline = ChaosCharts.timelinePng(title(), m.buckets(), m.events());
            Files.write(dir.resolve("timeline.png"), timeline);
            histogram = ChaosCharts.histogramPng("Re-election: " + title(), values(ChaosRunner.Round::electionMs),
                    values(ChaosRunner.Round::firstAckMs), settings.electionTimeoutMs());
            Files.write(dir.resolve("histogram.png"), histogram);
        } catch (RuntimeException e) {
            // The tables and verdicts matter more than the pictures: the page says the charts are missing.
            org.slf4j.LoggerFactory.getLogger(ChaosReport.class).warn("chaos report: charts not drawn: {}", e.toString());
        }
        Files.writeString(dir.resolve("report.html"), ChaosHtml.page(this, timeline, histogram), StandardCharsets.UTF_8);
    }

    /** One paragraph for the terminal. */
    String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "chaos %s: %d rounds, %s, election timeout %d ms, %.0f s%n", settings.mode().label,
                rounds.size(), settings.topology(), settings.electionTimeoutMs(), m.seconds()));
        if (!complete()) {
            sb.append("  INCOMPLETE: ").append(m.incompleteReason()).append('\n');
        }
        if (settings.links().any()) {
            sb.append("  link fault: ").append(linkLine()).append('\n');
        }
        if (settings.mode() != ChaosRunner.Mode.NONE) {
            sb.append("  fault -> new leader:        ").append(line(election())).append('\n');
            sb.append("  fault -> first acked write: ").append(line(firstAck())).append('\n');
            if (settings.mode() == ChaosRunner.Mode.ISOLATE_LEADER) {
                sb.append("  heal -> caught up:          ").append(line(catchUp())).append('\n');
            } else {
                sb.append("  restart -> caught up:       ").append(line(catchUp())).append('\n');
                sb.append("    of which spawn -> serving: ").append(line(serving())).append('\n');
            }
            if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
                sb.append("  resume -> stepped down:     ").append(line(stepDown())).append('\n');
                sb.append("  acks by the paused leader after its lease: ").append(victimAcksAfterLease()).append('\n');
            }
            if (settings.mode() == ChaosRunner.Mode.ISOLATE_LEADER) {
                sb.append("  new leader -> first ack:    ").append(line(leaderToFirstAck())).append('\n');
                sb.append("  isolate -> it stopped leading (its log): ").append(line(ownStepDown())).append('\n');
                sb.append("  heal -> stepped down:       ").append(line(stepDown())).append('\n');
                sb.append("  acks by the isolated leader of increments invoked after its lease: ").append(victimAcksAfterLease()).append('\n');
            }
        }
        sb.append("  elections: ").append(m.elections()).append(" (terms advanced: ").append(m.termChanges()).append("; not explained by a fault: ")
                .append(extraElections()).append(")\n");
        for (ChaosRunner.Round r : failedRounds()) {
            sb.append("  round ").append(r.number()).append(" FAILED: ").append(r.failure()).append('\n');
        }
        sb.append(String.format(Locale.ROOT, "  increments: %d acknowledged, %d unknown, %d failed; final value %s; lost %d, doubled %d%n",
                acked, unknown, m.failed(), finalValue == null ? "unread (" + m.readProblem() + ")" : finalValue, lost(), doubled()));
        sb.append("  linearizability: ").append(verdictLine()).append('\n');
        targets().forEach((k, v) -> sb.append("  ").append(v ? "met   " : "MISSED").append(' ').append(k).append('\n'));
        sb.append("  invariants: ").append(invariantsHold() ? "hold" : "VIOLATED");
        return sb.toString();
    }

    /** The link fault and, when read, what it did: {@code 5% loss on every link between servers (nft dropped ...)}. */
    String linkLine() {
        LinkFault f = settings.links();
        if (!f.any()) {
            return "none";
        }
        String scope = f.lossPercent() == 0 ? "; only server-to-server traffic is delayed (through a relay); clients connect directly"
                : !f.delays() ? "; only packets a server sends to another server are dropped; clients connect directly"
                : "; only server-to-server traffic is delayed (through a relay) and dropped; clients connect directly";
        return f.describe() + scope + (m.links() == null ? "" : " (" + m.links().describe(f) + ")");
    }

    String verdictLine() {
        HistoryCheck.Verdict v = m.linearizability();
        String s = String.format(Locale.ROOT, "%s (%,d operations, %,d with unknown outcome, checked in %.0f ms)", v.outcome(), v.operations(),
                v.unknownOutcomes(), v.millis());
        if (v.window() != null) {
            s += String.format(Locale.ROOT, "; smallest failing window: the operations from %.3f s to %.3f s (%d operations)",
                    v.window().fromSeconds(), v.window().toSeconds(), v.window().operations());
        }
        return s;
    }

    private static String line(Stats s) {
        if (s.count() == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "median %s, p90 %s, max %s (n=%d)", ChaosRunner.ms(s.median()), ChaosRunner.ms(s.p90()),
                ChaosRunner.ms(s.max()), s.count());
    }

    String json() {
        JsonObject o = new JsonObject();
        o.addProperty("mode", settings.mode().label);
        o.addProperty("complete", complete());
        if (!complete()) {
            o.addProperty("incompleteReason", m.incompleteReason());
        }
        o.addProperty("topology", settings.topology());
        o.addProperty("witness", settings.witness());
        o.add("linkFault", linkJson());
        o.addProperty("electionTimeoutMs", settings.electionTimeoutMs());
        o.addProperty("concurrency", settings.concurrency());
        o.addProperty("settleMs", settings.settleMs());
        o.addProperty("roundsRequested", settings.rounds());
        o.add("seconds", num(m.seconds()));
        JsonObject nodes = new JsonObject();
        new TreeMap<>(m.nodes()).forEach((addr, name) -> nodes.addProperty(name, addr));
        o.add("nodes", nodes);
        JsonArray rs = new JsonArray();
        for (ChaosRunner.Round r : rounds) {
            JsonObject j = new JsonObject();
            j.addProperty("round", r.number());
            j.addProperty("victim", r.victim());
            j.addProperty("newLeader", r.newLeader());
            j.addProperty("newTerm", r.newTerm());
            j.add("electionMs", num(r.electionMs()));
            j.add("firstAckMs", num(r.firstAckMs()));
            j.add("catchUpMs", num(r.catchUpMs()));
            j.add("servingMs", num(r.servingMs()));
            j.add("stepDownMs", num(r.stepDownMs()));
            j.add("ownStepDownMs", num(r.ownStepDownMs()));
            j.addProperty("victimAcksAfterLease", r.victimAcksAfterLease());
            j.addProperty("failure", r.failure());
            j.addProperty("detail", r.detail());
            rs.add(j);
        }
        o.add("rounds", rs);
        o.add("electionMs", stats(election()));
        o.add("firstAckMs", stats(firstAck()));
        o.add("catchUpMs", stats(catchUp()));
        o.add("servingMs", stats(serving()));
        o.add("stepDownMs", stats(stepDown()));
        o.add("leaderToFirstAckMs", stats(leaderToFirstAck()));
        o.add("ownStepDownMs", stats(ownStepDown()));
        o.addProperty("elections", m.elections());
        o.addProperty("extraElections", extraElections());
        o.addProperty("termChanges", m.termChanges());
        o.addProperty("finalTerm", m.finalTerm());
        o.addProperty("acknowledged", acked);
        o.addProperty("unknown", unknown);
        o.addProperty("failed", m.failed());
        o.addProperty("finalValue", finalValue);
        o.addProperty("lost", lost());
        o.addProperty("doubled", doubled());
        o.addProperty("victimAcksAfterLease", victimAcksAfterLease());
        HistoryCheck.Verdict v = m.linearizability();
        JsonObject lin = new JsonObject();
        lin.addProperty("outcome", v.outcome());
        lin.addProperty("operations", v.operations());
        lin.addProperty("unknownOutcomes", v.unknownOutcomes());
        lin.addProperty("steps", v.steps());
        lin.add("millis", num(v.millis()));
        lin.addProperty("method", m.historyBound());
        lin.addProperty("explanation", v.explanation());
        if (v.window() != null) {
            JsonObject w = new JsonObject();
            w.add("fromSeconds", seconds(v.window().fromSeconds()));
            w.add("toSeconds", seconds(v.window().toSeconds()));
            w.addProperty("operations", v.window().operations());
            w.addProperty("explanation", v.window().explanation());
            lin.add("smallestFailingWindow", w);
        }
        o.add("linearizability", lin);
        JsonArray events = new JsonArray();
        for (ChaosRecorder.Event e : m.events()) {
            JsonObject j = new JsonObject();
            j.add("seconds", seconds(e.seconds()));
            j.addProperty("kind", e.kind().name().toLowerCase(Locale.ROOT));
            j.addProperty("what", e.label());
            events.add(j);
        }
        o.add("events", events);
        JsonObject t = new JsonObject();
        targets().forEach(t::addProperty);
        o.add("targets", t);
        JsonArray problems = new JsonArray();
        m.problems().forEach(problems::add);
        o.add("clientProblems", problems);
        o.addProperty("invariantsHold", invariantsHold());
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().serializeNulls().create().toJson(o) + "\n";
    }

    private JsonObject linkJson() {
        LinkFault f = settings.links();
        JsonObject o = new JsonObject();
        o.addProperty("description", f.describe());
        o.addProperty("lossPercent", f.lossPercent());
        o.addProperty("delayMs", f.delayMs());
        o.addProperty("jitterMs", f.jitterMs());
        LinkFaults.Totals t = m.links();
        if (t != null) {
            o.addProperty("packetsBetweenServers", t.packetsToPeers());
            o.addProperty("packetsDropped", t.dropped());
            if (t.relay() != null) {
                JsonObject r = new JsonObject();
                r.addProperty("connections", t.relay().connections());
                r.addProperty("failedConnects", t.relay().failedConnects());
                r.addProperty("chunks", t.relay().chunks());
                r.addProperty("bytes", t.relay().bytes());
                r.add("minHoldMs", num(t.relay().minHoldMs()));
                r.add("meanHoldMs", num(t.relay().meanHoldMs()));
                r.add("maxHoldMs", num(t.relay().maxHoldMs()));
                o.add("relay", r);
            }
        }
        return o;
    }

    private static JsonObject stats(Stats s) {
        JsonObject o = new JsonObject();
        o.addProperty("count", s.count());
        o.add("min", num(s.min()));
        o.add("median", num(s.median()));
        o.add("p90", num(s.p90()));
        o.add("p99", num(s.p99()));
        o.add("max", num(s.max()));
        return o;
    }

    /** A number rounded to 0.1 (what the clocks resolve), or JSON null when not measured. */
    private static JsonElement num(double v) {
        return Double.isNaN(v) ? JsonNull.INSTANCE : new JsonPrimitive(Math.round(v * 10) / 10.0);
    }

    /** A time in seconds, to the millisecond. */
    private static JsonElement seconds(double v) {
        return Double.isNaN(v) ? JsonNull.INSTANCE : new JsonPrimitive(Math.round(v * 1000) / 1000.0);
    }

    String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Chaos run: ").append(settings.mode().label).append("\n\n");
        if (!complete()) {
            sb.append("**INCOMPLETE:** ").append(m.incompleteReason()).append(". What was measured until then follows.\n\n");
        }
        sb.append(String.format(Locale.ROOT, "%d rounds, %s, election timeout %d ms, %d concurrent clients, %.0f s. Nodes: %s.%n%n",
                rounds.size(), settings.topology(), settings.electionTimeoutMs(), settings.concurrency(), m.seconds(), nodeLegend()));
        if (settings.links().any()) {
            sb.append("Link fault for the whole run: ").append(linkLine()).append(".\n\n");
        }
        if (settings.mode() != ChaosRunner.Mode.NONE) {
            sb.append("| measure | median | p90 | max | n |\n|---|---|---|---|---|\n");
            for (Map.Entry<String, Stats> e : measures().entrySet()) {
                row(sb, e.getKey(), e.getValue());
            }
            sb.append("\n| round | victim | new leader | term | new leader (ms) | first ack (ms) | caught up (ms) | result |\n"
                    + "|---|---|---|---|---|---|---|---|\n");
            for (ChaosRunner.Round r : rounds) {
                sb.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | %s | %s | %s | %s |%n", r.number(), r.victim(), r.newLeader(),
                        r.newTerm(), fixed(r.electionMs()), fixed(r.firstAckMs()), fixed(r.catchUpMs()),
                        r.failure().isEmpty() ? "ok" : "**" + r.failure() + "**"));
            }
            for (ChaosRunner.Round r : rounds) {
                if (!r.detail().isEmpty()) {
                    sb.append("\nRound ").append(r.number()).append(": ").append(r.detail()).append('\n');
                }
            }
        }
        sb.append("\nElections during the run: ").append(m.elections()).append(" (terms advanced: ").append(m.termChanges())
                .append("; not explained by a fault: ").append(extraElections()).append(").\n");
        sb.append(String.format(Locale.ROOT, "%nIncrements: %d acknowledged, %d unknown, %d failed. Final value (linearizable read): %s. "
                + "Lost: %d. Doubled: %d.%n", acked, unknown, m.failed(), finalValue == null ? "unread" : finalValue, lost(), doubled()));
        if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
            sb.append("Increments acknowledged by a paused leader after its lease expired: ").append(victimAcksAfterLease()).append(".\n");
        }
        if (settings.mode() == ChaosRunner.Mode.ISOLATE_LEADER) {
            sb.append("Increments invoked after the isolated leader's lease expired (0.9 election timeouts after the cut) that it "
                    + "acknowledged: ").append(victimAcksAfterLease()).append(".\n");
        }
        sb.append("\nLinearizability: ").append(verdictLine()).append(". ").append(m.historyBound()).append(".\n");
        sb.append("\n| target | result |\n|---|---|\n");
        targets().forEach((k, v) -> sb.append("| ").append(k).append(" | ").append(v ? "met" : "**missed**").append(" |\n"));
        sb.append("\nInvariants: ").append(invariantsHold() ? "hold" : "**VIOLATED**").append(".\n");
        if (!m.problems().isEmpty()) {
            sb.append("\nFirst client answers other than ok:\n\n");
            m.problems().forEach(p -> sb.append("- `").append(p).append("`\n"));
        }
        return sb.toString();
    }

    /** The measures shown for this mode, name → statistics. */
    Map<String, Stats> measures() {
        Map<String, Stats> out = new LinkedHashMap<>();
        out.put("fault → new leader", election());
        out.put("fault → first acknowledged write", firstAck());
        switch (settings.mode()) {
            case CORRUPT_FOLLOWER -> out.put("restart → repaired (role follower, everything committed applied)", catchUp());
            case DISK_FULL -> out.put("disk freed, restart → caught up", catchUp());
            case ISOLATE_LEADER -> out.put("heal → old leader caught up", catchUp());
            default -> out.put("restart (or resume) → caught up", catchUp());
        }
        if (settings.mode() != ChaosRunner.Mode.ISOLATE_LEADER) {
            // Nothing is restarted there: the cut-off leader keeps running.
            out.put("restart → restarted node answers (JVM start, storage open)", serving());
        }
        if (settings.mode() == ChaosRunner.Mode.PAUSE_LEADER) {
            out.put("resume → old leader stepped down", stepDown());
        }
        if (settings.mode() == ChaosRunner.Mode.ISOLATE_LEADER) {
            out.put("new leader → first acknowledged write", leaderToFirstAck());
            out.put("isolate → isolated leader stopped leading (its own log)", ownStepDown());
            out.put("heal → old leader seen stepped down", stepDown());
        }
        if (settings.mode() == ChaosRunner.Mode.DISK_FULL) {
            out.put("term change (leader killed) → the full node stopped answering", stepDown());
        }
        return out;
    }

    /** {@code n1 = 127.0.0.1:40001, ...}. */
    String nodeLegend() {
        List<String> parts = new ArrayList<>();
        new TreeMap<>(m.nodes().entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getValue, Map.Entry::getKey)))
                .forEach((name, addr) -> parts.add(name + " = " + addr));
        return String.join(", ", parts);
    }

    static String fixed(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static void row(StringBuilder sb, String name, Stats s) {
        sb.append("| ").append(name).append(" | ").append(ChaosRunner.ms(s.median())).append(" | ").append(ChaosRunner.ms(s.p90()))
                .append(" | ").append(ChaosRunner.ms(s.max())).append(" | ").append(s.count()).append(" |\n");
    }

    List<Double> values(ToDoubleFunction<ChaosRunner.Round> f) {
        return rounds.stream().map(r -> f.applyAsDouble(r)).filter(d -> !d.isNaN()).toList();
    }

    long acked() {
        return acked;
    }

    long unknown() {
        return unknown;
    }

    Long finalValue() {
        return finalValue;
    }

    ChaosRunner.Settings settings() {
        return settings;
    }

    List<ChaosRunner.Round> rounds() {
        return rounds;
    }
}
