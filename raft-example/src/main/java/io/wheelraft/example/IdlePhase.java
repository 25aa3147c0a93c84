package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import io.wheelraft.proto.GroupsSummaryResponse;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The idle phase of {@code groups-bench}: what the processes cost with no client load once the
 * groups have settled. Waits {@code settleSecs}, then until every hosted replica reports quiet
 * ({@code GroupsSummary.quiet}, polled every 200 ms) or {@code quietWaitSecs} ran out, then
 * measures CPU over the window and memory, threads and wheel entries at its end. Stateless.
 */
final class IdlePhase {

    private IdlePhase() {
    }

    static GroupsBenchReport.Idle measure(GroupsBenchCluster cluster, int settleSecs, int quietWaitSecs, int windowSecs)
            throws IOException, InterruptedException {
        TimeUnit.SECONDS.sleep(settleSecs); // let start-up work (JIT, first GCs, RocksDB flushes) finish
        long waitStart = System.nanoTime();
        long deadline = waitStart + TimeUnit.SECONDS.toNanos(quietWaitSecs);
        boolean allQuiet;
        while (true) {
            allQuiet = quietEverywhere(cluster);
            if (allQuiet || System.nanoTime() - deadline > 0) {
                break;
            }
            cluster.checkAlive();
            TimeUnit.MILLISECONDS.sleep(200);
        }
        long quietWaitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - waitStart);
        if (!allQuiet) {
            System.err.println(Main.NAME + ": not every group was quiet after " + quietWaitSecs + " s; measuring idle anyway");
        }
        long[] cpuBefore = new long[3];
        for (int i = 0; i < 3; i++) {
            cpuBefore[i] = ProcessSample.cpuNanos(cluster.pid(i));
        }
        long windowStart = System.nanoTime();
        TimeUnit.SECONDS.sleep(windowSecs); // the idle window measured
        long windowNanos = System.nanoTime() - windowStart;
        // Everything but the heap is read from all three before any full collection: at 100,000
        // groups one takes about 3 s, and the peers of a paused process report it silent and
        // wake the groups it leads, which changed the other processes' quiet replicas and wheel
        // entries when they were read after it.
        double[] cpuPercent = new double[3];
        int[] quiet = new int[3];
        long[] rss = new long[3];
        ProcessSample.Scrape[] before = new ProcessSample.Scrape[3];
        for (int i = 0; i < 3; i++) {
            cpuPercent[i] = 100.0 * (ProcessSample.cpuNanos(cluster.pid(i)) - cpuBefore[i]) / windowNanos;
        }
        for (int i = 0; i < 3; i++) {
            quiet[i] = quiet(cluster, i);
            rss[i] = ProcessSample.rssBytes(cluster.pid(i));
            before[i] = ProcessSample.scrape("127.0.0.1", cluster.metricsPort(i));
        }
        List<GroupsBenchReport.ProcessFigures> figures = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ProcessSample.collectGarbage(cluster.pid(i));
            long heap = (long) ProcessSample.scrape("127.0.0.1", cluster.metricsPort(i)).heapUsedBytes();
            figures.add(new GroupsBenchReport.ProcessFigures(cpuPercent[i], rss[i], heap, (long) before[i].liveThreads(),
                    (long) before[i].wheelEntries(), quiet[i]));
        }
        return new GroupsBenchReport.Idle(figures, allQuiet, quietWaitMs);
    }

    /**
     * Heap in use after a full collection of each process, after {@code settleSecs}: the
     * baseline a process costs with one group, which heap per replica is counted from.
     */
    static List<Long> heapAfterGc(GroupsBenchCluster cluster, int settleSecs) throws IOException, InterruptedException {
        TimeUnit.SECONDS.sleep(settleSecs);
        List<Long> heap = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ProcessSample.collectGarbage(cluster.pid(i));
            heap.add((long) ProcessSample.scrape("127.0.0.1", cluster.metricsPort(i)).heapUsedBytes());
        }
        return heap;
    }

    private static boolean quietEverywhere(GroupsBenchCluster cluster) {
        for (int i = 0; i < 3; i++) {
            try {
                GroupsSummaryResponse s = cluster.summary(i);
                if (s.getQuiet() < s.getGroups()) {
                    return false;
                }
            } catch (StatusRuntimeException e) {
                return false;
            }
        }
        return true;
    }

    /** How many replicas process {@code i} has quiet; -1 if it does not answer. */
    private static int quiet(GroupsBenchCluster cluster, int i) {
        try {
            return cluster.summary(i).getQuiet();
        } catch (StatusRuntimeException e) {
            return -1;
        }
    }
}
