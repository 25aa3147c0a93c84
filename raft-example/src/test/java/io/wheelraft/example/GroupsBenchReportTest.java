package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The groups benchmark's reading of a Prometheus scrape, its tables, summary line and charts. */
class GroupsBenchReportTest {

    private static final GroupsBenchReport.Setup SETUP = new GroupsBenchReport.Setup("groups-bench --groups 100,1000", 1000, new ServerJvm("2g", ServerJvm.Collector.SERIAL), 10, 30, 30);

    private static List<GroupsBenchReport.ProcessFigures> processes(double cpu, long heapMib, long wheel, int quiet) {
        return List.of(new GroupsBenchReport.ProcessFigures(cpu, 300L << 20, heapMib << 20, 30, wheel, quiet),
                new GroupsBenchReport.ProcessFigures(20.0, 310L << 20, (heapMib + 10) << 20, 31, wheel, quiet),
                new GroupsBenchReport.ProcessFigures(7.25, 290L << 20, (heapMib - 10) << 20, 29, wheel, quiet));
    }

    private static GroupsBenchReport.Row idleRow(int groups, long heapMib, boolean allQuiet) {
        return new GroupsBenchReport.Row(groups, 4_000, 9_500, groups,
                new GroupsBenchReport.Idle(processes(12.5, heapMib, 3L * groups, allQuiet ? groups : 0), allQuiet, allQuiet ? 2_300 : 30_100),
                null, null);
    }

    @Test
    void aScrapeSumsTheHeapPoolsButEdenAndReadsThreadsAndWheelEntries() {
        String text = """
                # HELP jvm_memory_used_bytes The amount of used memory
                # TYPE jvm_memory_used_bytes gauge
                jvm_memory_used_bytes{area="heap",id="Tenured Gen"} 1000.0
                jvm_memory_used_bytes{area="heap",id="Eden Space"} 200.0
                jvm_memory_used_bytes{area="heap",id="Survivor Space"} 30.0
                jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 5000.0
                jvm_threads_live_threads 27.0
                wheelraft_timer_pending 3003.0
                wheelraft_timer_fired_total 12.0
                """;
        ProcessSample.Scrape s = ProcessSample.parse(text);
        assertEquals(1030.0, s.heapUsedBytes(), "eden is what was allocated after the collection, not live data");
        assertEquals(27.0, s.liveThreads());
        assertEquals(3003.0, s.wheelEntries());
    }

    @Test
    void theIdleTableCountsHeapPerReplicaFromTheOneGroupBaselineAndSaysWhetherIdleWaitedForQuiet() {
        // baseline 20 MiB mean; at 1000 groups the mean is 100 MiB: 80 MiB over 999 more replicas = 82.0 KiB each
        String table = GroupsBenchReport.table(SETUP, List.of(20L << 20, 25L << 20, 15L << 20),
                List.of(idleRow(100, 30, false), idleRow(1000, 100, true)));
        String row = table.lines().filter(l -> l.startsWith("| 1000 ")).findFirst().orElseThrow();
        assertEquals("| 1000 | 4.0 | 9.5 | 1000 | all quiet after 2.3 s | 1000 / 1000 / 1000 | 12.5 / 20.0 / 7.3 | 300 / 310 / 290 "
                + "| 100 / 110 / 90.0 | 82.0 | 30 / 31 / 29 | 3000 / 3000 / 3000 |", row);
        String small = table.lines().filter(l -> l.startsWith("| 100 ")).findFirst().orElseThrow();
        assertTrue(small.contains("| not all quiet after 30.1 s | 0 / 0 / 0 |"), small);
        assertTrue(small.contains("| 103.4 |"), small); // (30 - 20) MiB over 99 more replicas
        assertTrue(table.contains("one-group heap per process 20.0 / 25.0 / 15.0 MiB"), table);
        assertTrue(table.contains("`java -jar raft-example/target/wheelraft-counter.jar groups-bench --groups 100,1000`"), table);
        assertFalse(table.contains("**Writes.**"), "no writes table without a writes phase");
        assertFalse(table.contains("**Kill.**"), "no kill table without a kill phase");
    }

    @Test
    void withoutBaselineOrIdlePhaseTheTableSaysSoInsteadOfInventingFigures() {
        var notLed = new GroupsBenchReport.Row(1000, 4_000, -1, 367, null, null, null);
        String table = GroupsBenchReport.table(SETUP, null, List.of(notLed, idleRow(300, 40, true)));
        assertTrue(table.contains("| 1000 | 4.0 | not all | 367 | not run | - |"), table);
        assertTrue(table.contains("not measured (no one-group baseline)"), table);
        String row = table.lines().filter(l -> l.startsWith("| 300 ")).findFirst().orElseThrow();
        assertTrue(row.contains("| 40.0 / 50.0 / 30.0 | - |"), row);
        assertTrue(GroupsBenchReport.summaryLine(notLed).contains("NOT all led (367 leaders at the end)"));
    }

    @Test
    void theWritesTableComparesSpreadWithOneGroup() {
        var writes = new GroupsBenchReport.Writes(256, 128, 10, new GroupsBenchReport.Load(7_600, 12, 40.5, 35, 0, 0),
                new GroupsBenchReport.Load(10_000, 10, 30.25, 8, 1, 2));
        var row = new GroupsBenchReport.Row(10_000, 50_000, 90_000, 10_000, null, writes, null);
        String table = GroupsBenchReport.table(SETUP, null, List.of(row));
        String line = table.lines().filter(l -> l.startsWith("| 10000 | 256 ")).findFirst().orElseThrow();
        assertEquals("| 10000 | 256 | 10000 | 7600 | 76 % | 30.3 / 40.5 | 8.0 / 35.0 | 1 / 2 |", line);
        assertTrue(GroupsBenchReport.summaryLine(row).contains("writes one group 10000 ops/s, 256 groups 7600 ops/s (76 %)"),
                GroupsBenchReport.summaryLine(row));
    }

    @Test
    void aRunWhoseSingleGroupMadeNothingShowsNoRatio() {
        var writes = new GroupsBenchReport.Writes(256, 128, 10, new GroupsBenchReport.Load(0, 0, 0, 35, 215, 38),
                new GroupsBenchReport.Load(0, 0, 0, 8, 186, 70));
        var row = new GroupsBenchReport.Row(10_000, 50_000, -1, 4_047, null, writes, null);
        String line = GroupsBenchReport.table(SETUP, null, List.of(row)).lines().filter(l -> l.startsWith("| 10000 | 256 ")).findFirst().orElseThrow();
        assertTrue(line.contains("| 0 | 0 | n/a |"), line);
        assertTrue(GroupsBenchReport.summaryLine(row).contains("256 groups 0 ops/s (n/a)"), GroupsBenchReport.summaryLine(row));
    }

    @Test
    void theKillTableGivesPercentilesOverAllTheVictimsGroupsAndTheLostWriteCheck() {
        long[] times = new long[98];
        for (int i = 0; i < times.length; i++) {
            times[i] = 100 + 10L * i; // 100 .. 1070 ms
        }
        var verdict = new LostWrites.Verdict(256, 250, 6, 40_000, 12, 3, 0, 0, 0);
        long[] seen = new long[times.length];
        for (int i = 0; i < seen.length; i++) {
            seen[i] = times[i] + 20; // each poll saw it 20 ms after the leader's own record
        }
        var kill = new GroupsBenchReport.Kill(1, 100, times, seen, 2, 30_000, 25, verdict, List.of());
        var row = new GroupsBenchReport.Row(300, 8_000, 12_000, 300, null, null, kill);
        String table = GroupsBenchReport.table(SETUP, null, List.of(row));
        String line = table.lines().filter(l -> l.startsWith("| 300 ") && l.contains("process 2")).findFirst().orElseThrow();
        // 100 groups: 98 led again (p50 is the 50th: 590 ms), 2 never: p99 and max fall among those
        assertEquals("| 300 | process 2 | 100 | 98 | 590 / > 30 s / > 30 s | 610 / > 30 s / > 30 s | 256 / 250 | 40000 | 12 | 0 | 0 |", line);
        assertTrue(table.contains("survivors every 25 ms"), table);
        String summary = GroupsBenchReport.summaryLine(row);
        assertTrue(summary.contains("kill: 98 of 100 groups led again within 2 s, p50/p99/max 590/> 30 s/> 30 s ms "
                + "(seen by polling 610/> 30 s/> 30 s ms); lost acked 0 of 40000"), summary);
    }

    /** With --kill-rounds, the table is the last kill's and the earlier rounds are named after it, in order. */
    @Test
    void earlierKillRoundsAreListedAfterTheTableAndInTheSummary() {
        FailoverTimes cold = new FailoverTimes(new int[]{1, 2, 3, 4}, 0, 0);
        cold.observe(List.of(1, 2, 3, 4), List.of(1_500L, 2_500L, 3_000L, 4_000L), 1);
        String round1 = KillPhase.describe(1, cold);
        assertEquals("round 1: 1 of 4 within 2 s, p50/p99/max 2500/4000/4000 ms", round1);
        var kill = new GroupsBenchReport.Kill(2, 4, new long[]{300, 400, 500, 600}, new long[]{310, 420, 520, 620}, 0, 30_000, 25,
                new LostWrites.Verdict(10, 10, 0, 500, 0, 0, 0, 0, 0), List.of(round1));
        var row = new GroupsBenchReport.Row(10, 1_000, 2_000, 10, null, null, kill);
        String table = GroupsBenchReport.table(SETUP, null, List.of(row));
        assertTrue(table.contains("At 10 groups the table gives the last of 2 kills of the same process"), table);
        assertTrue(table.contains(round1), table);
        assertTrue(GroupsBenchReport.summaryLine(row).endsWith("(the last of 2 kills; before: " + round1 + ")"), GroupsBenchReport.summaryLine(row));
    }

    @Test
    void writesTheTableAndOnlyTheChartsOfPhasesThatRan(@TempDir Path dir) throws Exception {
        var kill = new GroupsBenchReport.Kill(0, 3, new long[]{300, 400, 2_500}, new long[]{310, 420, 2_600}, 0, 30_000, 25,
                new LostWrites.Verdict(10, 10, 0, 500, 0, 0, 0, 0, 0), List.of());
        GroupsBenchReport.write(dir, SETUP, null, List.of(new GroupsBenchReport.Row(10, 1_000, 2_000, 10, null, null, kill),
                new GroupsBenchReport.Row(100, 1_000, 2_000, 100, null, null, kill)));
        assertTrue(Files.size(dir.resolve(GroupsBenchReport.TABLE)) > 0);
        assertTrue(Files.size(dir.resolve(GroupsBenchReport.FAILOVER_CHART)) > 0);
        assertFalse(Files.exists(dir.resolve(GroupsBenchReport.CPU_CHART)));

        GroupsBenchReport.write(dir, SETUP, List.of(1L << 20, 1L << 20, 1L << 20), List.of(idleRow(10, 30, true), idleRow(100, 40, false)));
        assertTrue(Files.size(dir.resolve(GroupsBenchReport.CPU_CHART)) > 0);
        assertTrue(Files.size(dir.resolve(GroupsBenchReport.MEMORY_CHART)) > 0);
    }

    @Test
    void theHostsCpuStealIsInTheSummaryLineAndTheTableWhenMeasured() {
        var stolen = new GroupsBenchReport.Row(1000, 4_000, 9_000, 1000, null, null, null, 23.4);
        var unmeasured = new GroupsBenchReport.Row(100, 1_000, 2_000, 100, null, null, null);
        assertTrue(GroupsBenchReport.summaryLine(stolen).endsWith("; host CPU steal 23 % over the count's run"), GroupsBenchReport.summaryLine(stolen));
        assertFalse(GroupsBenchReport.summaryLine(unmeasured).contains("steal"));
        String table = GroupsBenchReport.table(SETUP, null, List.of(unmeasured, stolen));
        assertTrue(table.contains("to their stop: 1,000 groups 23 %."), table);
        assertFalse(GroupsBenchReport.table(SETUP, null, List.of(unmeasured)).contains("steal"));
    }
}
