package io.wheelraft.bench;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Collects the points of a run made of interleaved rounds (every system measured once per round,
 * in turn) and sums them up.
 *
 * <p>Why rounds: this machine's speed drifts by up to a third over minutes, and the systems are
 * measured one after another, so in a single pass a drift between two systems' turns reads as a
 * difference between the systems. Interleaving puts every system in every stretch of the run; the
 * ratio of two systems is then taken within each round (same minutes, same drift) and its median
 * over the rounds is the figure the targets are read from.
 *
 * <p>The combined row of a system at one in-flight count adds up every round: ops/s is all
 * acknowledgements over all measured seconds, and the percentiles come from the merged latency
 * histograms (not an average of per-round percentiles). Not thread-safe.
 */
final class RoundsSummary {

    /**
     * One system at one in-flight count in one round.
     *
     * @param serverCpuNanos the three servers' process CPU over the window; negative if unknown
     */
    record Point(int round, String system, int inFlight, ClosedLoopLoad.Measurement measurement, double loadBefore, double stealPercent,
                 long serverCpuNanos) {
        /** Server CPU per acknowledged increment in microseconds, NaN if unknown or nothing was acknowledged. */
        double serverCpuMicrosPerOp() {
            return microsPerOp(serverCpuNanos, measurement.acknowledged());
        }
    }

    /** CPU time per acknowledged increment in microseconds; NaN if the CPU is unknown (negative) or nothing was acknowledged. */
    static double microsPerOp(long cpuNanos, long acknowledged) {
        return cpuNanos < 0 || acknowledged == 0 ? Double.NaN : cpuNanos / 1e3 / acknowledged;
    }

    private final List<Point> points = new ArrayList<>();

    void add(Point p) {
        points.add(Objects.requireNonNull(p));
    }

    int rounds() {
        return points.stream().mapToInt(Point::round).max().orElse(0);
    }

    /** One row per system and in-flight count (first-seen order), every round combined. */
    List<BenchResult> combined() {
        Map<String, List<Point>> byKey = new LinkedHashMap<>();
        for (Point p : points) {
            byKey.computeIfAbsent(p.system() + '\u0000' + p.inFlight(), k -> new ArrayList<>()).add(p);
        }
        List<BenchResult> rows = new ArrayList<>();
        for (List<Point> same : byKey.values()) {
            Histogram merged = new Histogram(same.get(0).measurement().latencyMicros().getHighestTrackableValue(), 3);
            long acked = 0;
            long failed = 0;
            double seconds = 0;
            double load = 0;
            double steal = 0;
            long cpuNanos = 0;
            for (Point p : same) {
                merged.add(p.measurement().latencyMicros());
                acked += p.measurement().acknowledged();
                failed += p.measurement().failed();
                seconds += p.measurement().seconds();
                load += p.loadBefore();
                steal += p.stealPercent();
                cpuNanos = cpuNanos < 0 || p.serverCpuNanos() < 0 ? -1 : cpuNanos + p.serverCpuNanos();
            }
            ClosedLoopLoad.Measurement all = new ClosedLoopLoad.Measurement(acked, failed, seconds, merged);
            Point first = same.get(0);
            rows.add(new BenchResult(first.system(), first.inFlight(), all.opsPerSecond(), all.percentileMillis(50),
                    all.percentileMillis(99), all.percentileMillis(99.9), acked, failed, load / same.size(), steal / same.size(),
                    microsPerOp(cpuNanos, acked)));
        }
        return rows;
    }

    /**
     * A markdown table of {@code reference}'s ops/s divided by every other system's, per round and
     * in-flight count, with the median over the rounds; and the same for p99 latency (other
     * system's p99 divided by the reference's, so above 1 means the reference is better).
     */
    String ratioTable(String reference) {
        int rounds = rounds();
        StringBuilder sb = new StringBuilder();
        sb.append("| ").append(reference).append(" vs | in flight | measure |");
        for (int r = 1; r <= rounds; r++) {
            sb.append(" round ").append(r).append(" |");
        }
        sb.append(" median |\n|---|---:|---|");
        sb.append("---:|".repeat(rounds + 1)).append('\n');
        List<String> others = points.stream().map(Point::system).distinct().filter(s -> !s.equals(reference)).toList();
        List<Integer> counts = points.stream().map(Point::inFlight).distinct().toList();
        for (String other : others) {
            for (int n : counts) {
                row(sb, reference, other, n, rounds, "ops/s ratio (ours / theirs)",
                        (ref, o) -> ref.measurement().opsPerSecond() / o.measurement().opsPerSecond());
                row(sb, reference, other, n, rounds, "p99 ratio (theirs / ours)",
                        (ref, o) -> o.measurement().percentileMillis(99) / ref.measurement().percentileMillis(99));
                row(sb, reference, other, n, rounds, "server CPU per op ratio (theirs / ours)",
                        (ref, o) -> o.serverCpuMicrosPerOp() / ref.serverCpuMicrosPerOp());
            }
        }
        return sb.toString();
    }

    private interface RatioOf {
        double of(Point reference, Point other);
    }

    private void row(StringBuilder sb, String reference, String other, int n, int rounds, String what, RatioOf ratio) {
        sb.append(String.format(Locale.ROOT, "| %s | %d | %s |", other, n, what));
        List<Double> values = new ArrayList<>();
        for (int r = 1; r <= rounds; r++) {
            Point ref = find(r, reference, n);
            Point o = find(r, other, n);
            if (ref == null || o == null) {
                sb.append(" - |");
                continue;
            }
            double v = ratio.of(ref, o);
            if (Double.isNaN(v)) {
                // A latency of a window in which nothing was answered: no ratio to take a median of.
                sb.append(' ').append(BenchReport.NONE_ANSWERED).append(" |");
                continue;
            }
            values.add(v);
            sb.append(String.format(Locale.ROOT, " %.2fx |", v));
        }
        sb.append(values.isEmpty() ? " - |" : String.format(Locale.ROOT, " **%.2fx** |", median(values))).append('\n');
    }

    private Point find(int round, String system, int inFlight) {
        for (Point p : points) {
            if (p.round() == round && p.system().equals(system) && p.inFlight() == inFlight) {
                return p;
            }
        }
        return null;
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int m = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(m) : (sorted.get(m - 1) + sorted.get(m)) / 2;
    }
}
