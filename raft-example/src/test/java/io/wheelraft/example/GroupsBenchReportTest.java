package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The groups benchmark's reading of a Prometheus scrape and its table. */
class GroupsBenchReportTest {

    @Test
    void aScrapeSumsEveryHeapPoolAndReadsThreadsAndWheelEntries() {
        String text = """
                # HELP jvm_memory_used_bytes The amount of used memory
                # TYPE jvm_memory_used_bytes gauge
                jvm_memory_used_bytes{area="heap",id="Tenured Gen"} 1000.0
                jvm_memory_used_bytes{area="heap",id="Eden Space"} 200.0
                jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 5000.0
                jvm_threads_live_threads 27.0
                wheelraft_timer_pending 3003.0
                wheelraft_timer_fired_total 12.0
                """;
        ProcessSample.Scrape s = ProcessSample.parse(text);
        assertEquals(1200.0, s.heapUsedBytes());
        assertEquals(27.0, s.liveThreads());
        assertEquals(3003.0, s.wheelEntries());
    }

    @Test
    void theTableHasOneRowPerGroupCountWithEveryProcessInOrderAndHeapPerReplica() {
        var p = List.of(new GroupsBenchReport.ProcessFigures(12.5, 300L << 20, 100L << 20, 30, 3000),
                new GroupsBenchReport.ProcessFigures(20.0, 310L << 20, 110L << 20, 31, 3000),
                new GroupsBenchReport.ProcessFigures(7.25, 290L << 20, 90L << 20, 29, 3000));
        var small = List.of(new GroupsBenchReport.ProcessFigures(5, 200L << 20, 20L << 20, 30, 300),
                new GroupsBenchReport.ProcessFigures(5, 200L << 20, 20L << 20, 30, 300),
                new GroupsBenchReport.ProcessFigures(5, 200L << 20, 20L << 20, 30, 300));
        String table = GroupsBenchReport.table("groups-bench --groups 100,1000", 1000, 30, "2g",
                List.of(new GroupsBenchReport.Row(100, 1_000, 2_000, 100, small), new GroupsBenchReport.Row(1000, 4_000, 9_500, 1000, p)));
        String first = table.lines().filter(l -> l.startsWith("| 100 ")).findFirst().orElseThrow();
        assertTrue(first.contains("| 20.0 / 20.0 / 20.0 | - |"), first);
        String row = table.lines().filter(l -> l.startsWith("| 1000 ")).findFirst().orElseThrow();
        // the mean heap grew from 20 to 100 MiB for 900 more groups: 91.0 KiB each
        assertEquals("| 1000 | 4.0 | 9.5 | 1000 | 12.5 / 20.0 / 7.3 | 300 / 310 / 290 | 100 / 110 / 90.0 | 91.0 | 30 / 31 / 29 | 3000 / 3000 / 3000 |", row);
        String notLed = GroupsBenchReport.table("x", 1000, 30, "2g", List.of(new GroupsBenchReport.Row(1000, 4_000, -1, 367, p)));
        assertTrue(notLed.contains("| 1000 | 4.0 | not all | 367 |"), notLed);
        assertTrue(GroupsBenchReport.summaryLine(new GroupsBenchReport.Row(1000, 4_000, -1, 367, p)).contains("NOT all led (367 leaders at the end)"));
        assertTrue(table.contains("`java -jar raft-example/target/wheelraft-counter.jar groups-bench --groups 100,1000`"), table);
    }
}
