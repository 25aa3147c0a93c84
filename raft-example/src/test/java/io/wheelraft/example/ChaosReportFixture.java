package io.wheelraft.example;

import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.Operation;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A chaos report built from made-up measurements, as a real three-round kill-leader run would give them. */
final class ChaosReportFixture {

    /** Ten milliseconds in nanoseconds: the fixture's operations start this far apart. */
    static final long MS10 = 10_000_000L;

    private ChaosReportFixture() {
    }

    static ChaosRunner.Settings settings(Path out) {
        return new ChaosRunner.Settings(3, 1000, ChaosRunner.Mode.KILL_LEADER, out, 16, 60, 3600);
    }

    static List<ChaosRunner.Round> rounds() {
        return List.of(
                new ChaosRunner.Round(1, "n1", "n2", 3, 412.5, 530.1, 2100, 650, Double.NaN, 0),
                new ChaosRunner.Round(2, "n2", "n3", 5, 288.0, 391.7, 1900, 610, Double.NaN, 0),
                new ChaosRunner.Round(3, "n3", "n1", 6, 301.2, 402.9, 2300, 700, Double.NaN, 0));
    }

    /** {@code n} increments (each overlapping the next) by clients 0..3, each answered with the counter's new value, then a read. */
    static List<Operation<CounterModel.Input, Long>> goodHistory(int n) {
        List<Operation<CounterModel.Input, Long>> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ops.add(Operation.completed(i % 4, CounterModel.incr(1), (long) i + 1, i * MS10, i * MS10 + 15_000_000L));
        }
        ops.add(Operation.completed(9, CounterModel.get(), (long) n, n * MS10 + 20_000_000L, n * MS10 + 30_000_000L));
        return ops;
    }

    static List<ChaosRecorder.Bucket> buckets() {
        List<ChaosRecorder.Bucket> b = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            boolean gap = i % 100 > 50 && i % 100 < 55;
            b.add(new ChaosRecorder.Bucket(i * 0.1, gap ? 0 : 400 + i % 7 * 10, gap ? 3 : 0, gap ? Double.NaN : 2.1,
                    gap ? Double.NaN : 6.5, gap ? Double.NaN : 40 + i % 3));
        }
        return b;
    }

    static List<ChaosRecorder.Event> events() {
        List<ChaosRecorder.Event> e = new ArrayList<>();
        e.add(new ChaosRecorder.Event(0.5, ChaosRecorder.EventKind.LEADER, "n1 leads, term 2"));
        String[] victims = {"n1", "n2", "n3"};
        String[] leaders = {"n2", "n3", "n1"};
        for (int r = 0; r < 3; r++) {
            double t = 5 + r * 10;
            e.add(new ChaosRecorder.Event(t, ChaosRecorder.EventKind.FAULT, "kill " + victims[r] + " (leader)"));
            e.add(new ChaosRecorder.Event(t + 0.3, ChaosRecorder.EventKind.LEADER, leaders[r] + " leads, term " + (3 + r)));
            e.add(new ChaosRecorder.Event(t + 0.4, ChaosRecorder.EventKind.RECOVERY, "restart " + victims[r]));
            e.add(new ChaosRecorder.Event(t + 2.5, ChaosRecorder.EventKind.RECOVERY, victims[r] + " caught up"));
        }
        return e;
    }

    static ChaosReport report(Path out, List<Operation<CounterModel.Input, Long>> history, Long finalValue, long acked, String incomplete) {
        HistoryCheck.Verdict verdict = HistoryCheck.check(history, Duration.ofSeconds(10));
        return new ChaosReport(settings(out), new ChaosReport.Measured(rounds(), acked, 0, 0, finalValue, "", List.of(), 3, 4, 6, 31.5,
                Map.of("127.0.0.1:40001", "n1", "127.0.0.1:40002", "n2", "127.0.0.1:40003", "n3"), events(), buckets(), verdict,
                "Checked: the whole history in one search", incomplete));
    }
}
