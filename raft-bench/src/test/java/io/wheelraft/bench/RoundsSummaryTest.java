package io.wheelraft.bench;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoundsSummaryTest {

    private static ClosedLoopLoad.Measurement measured(long acknowledged, long... latenciesMicros) {
        Histogram h = new Histogram(60_000_000L, 3);
        for (long l : latenciesMicros) {
            h.recordValue(l);
        }
        return new ClosedLoopLoad.Measurement(acknowledged, 0, 10.0, h);
    }

    @Test
    void serverCpuPerOpCoversTheWindowOfEveryRound() {
        RoundsSummary s = new RoundsSummary();
        // 1,000 increments on 20 ms of server CPU, then 3,000 on 40 ms: 60 ms over 4,000 = 15 µs each.
        s.add(new RoundsSummary.Point(1, "A", 16, measured(1_000, 500), 1.0, 0, 20_000_000L));
        s.add(new RoundsSummary.Point(2, "A", 16, measured(3_000, 700), 1.0, 0, 40_000_000L));
        BenchResult row = s.combined().get(0);
        assertEquals(15.0, row.serverCpuMicrosPerOp(), 1e-9);
        assertEquals(20.0, new RoundsSummary.Point(1, "A", 16, measured(1_000, 500), 1.0, 0, 20_000_000L).serverCpuMicrosPerOp(), 1e-9);
    }

    @Test
    void anUnknownCpuSampleLeavesTheCombinedFigureUnknown() {
        RoundsSummary s = new RoundsSummary();
        s.add(new RoundsSummary.Point(1, "A", 16, measured(1_000, 500), 1.0, 0, 20_000_000L));
        s.add(new RoundsSummary.Point(2, "A", 16, measured(1_000, 500), 1.0, 0, -1));
        assertTrue(Double.isNaN(s.combined().get(0).serverCpuMicrosPerOp()));
    }

    @Test
    void theRatioTableComparesServerCpuPerOpWithinEachRound() {
        RoundsSummary s = new RoundsSummary();
        s.add(new RoundsSummary.Point(1, "ours", 16, measured(2_000, 500), 1.0, 0, 20_000_000L)); // 10 µs/op
        s.add(new RoundsSummary.Point(1, "theirs", 16, measured(1_000, 900), 1.0, 0, 30_000_000L)); // 30 µs/op
        String table = s.ratioTable("ours");
        String cpuRow = table.lines().filter(l -> l.contains("server CPU per op ratio")).findFirst().orElseThrow();
        assertTrue(cpuRow.contains(" 3.00x |"), cpuRow);
        assertTrue(cpuRow.contains("**3.00x**"), cpuRow);
    }

    @Test
    void aTableWithTheCpuColumnReadsBackAndOlderTablesStillParse() {
        BenchResult r = new BenchResult("A", 128, 60_868, 1.88, 6.77, 17.01, 608_680, 0, 5.86, 1, 17.4);
        List<BenchResult> back = BenchReport.parseTable(BenchReport.table(List.of(r)));
        assertEquals(1, back.size());
        assertEquals(17.4, back.get(0).serverCpuMicrosPerOp(), 1e-9);
        assertEquals(1.0, back.get(0).stealPercent(), 1e-9);
        assertEquals(60_868, back.get(0).opsPerSecond(), 1e-9);

        String withoutCpu = "| A | 1 | 1,805 | 0.45 | 2.57 | 5.17 | 0 | 6.98 | 2 |\n";
        BenchResult old = BenchReport.parseTable(withoutCpu).get(0);
        assertEquals(2.0, old.stealPercent(), 1e-9);
        assertTrue(Double.isNaN(old.serverCpuMicrosPerOp()));
        String withoutSteal = "| A | 1 | 1,805 | 0.45 | 2.57 | 5.17 | 0 | 6.98 |\n";
        assertTrue(Double.isNaN(BenchReport.parseTable(withoutSteal).get(0).stealPercent()));
    }
}
