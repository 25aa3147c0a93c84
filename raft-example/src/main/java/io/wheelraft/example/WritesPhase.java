package io.wheelraft.example;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The write phase of {@code groups-bench}: aggregate increment throughput with {@code concurrency}
 * increments outstanding, first all to one group (group 0), then each to a group picked at random
 * from a sample, on the same three processes. Counted as {@code bench} counts
 * ({@link LoadGenerator}, {@link MeasuredWindow}): increments acknowledged inside a fixed window
 * after a warm-up. The benchmark's own CPU is measured over each window too: every written group
 * has its own client here (on one shared transport), a cost of the client the reader should see.
 * Stateless.
 */
final class WritesPhase {

    /** How long one increment may retry before it counts as unknown. */
    private static final long TIMEOUT_MS = 10_000;

    private WritesPhase() {
    }

    static GroupsBenchReport.Writes measure(GroupsBenchCluster cluster, int[] sample, int concurrency, int warmupSecs, int windowSecs)
            throws IOException, InterruptedException {
        GroupsBenchReport.Load single = load(cluster, List.of(CounterGroups.groupId(0)), concurrency, warmupSecs, windowSecs);
        GroupsBenchReport.Load spread = load(cluster, GroupSample.ids(sample), concurrency, warmupSecs, windowSecs);
        return new GroupsBenchReport.Writes(sample.length, concurrency, windowSecs, spread, single);
    }

    /** One measured load on its own clients (closed after, so their threads do not weigh on the next). */
    private static GroupsBenchReport.Load load(GroupsBenchCluster cluster, List<String> groupIds, int concurrency, int warmupSecs,
                                               int windowSecs) throws IOException, InterruptedException {
        long self = ProcessHandle.current().pid();
        try (ClusterChannels channels = new ClusterChannels(cluster.endpoints())) {
            // One read per group first, so each client knows its group's leader: the window measures
            // steady writes, not a few hundred clients discovering leaders all at once.
            long[] primed = LostWrites.read(channels, groupIds, TIMEOUT_MS);
            long unprimed = java.util.Arrays.stream(primed).filter(v -> v == LostWrites.UNREAD).count();
            if (unprimed > 0) {
                System.err.println(Main.NAME + ": " + unprimed + " of " + groupIds.size() + " groups did not answer a read before the writes");
            }
            LoadGenerator load = new LoadGenerator(channels, groupIds, concurrency, TIMEOUT_MS, CounterClient.MAX_SILENCE_MS, true);
            load.start();
            MeasuredWindow window;
            long cpu;
            try {
                TimeUnit.SECONDS.sleep(warmupSecs);
                long start = System.nanoTime();
                window = load.measure(start, start + TimeUnit.SECONDS.toNanos(windowSecs));
                long cpuBefore = ProcessSample.cpuNanos(self);
                TimeUnit.SECONDS.sleep(windowSecs); // the window's end is fixed above
                cpu = ProcessSample.cpuNanos(self) - cpuBefore;
            } finally {
                load.stop();
            }
            cluster.checkAlive();
            if (load.unknown() + load.failed() > 0) {
                System.err.println(Main.NAME + ": writes to " + groupIds.size() + " groups: " + load.unknown() + " unknown, " + load.failed()
                        + " failed; first: " + String.join(" | ", load.problems().subList(0, Math.min(3, load.problems().size()))));
            }
            long[] lat = window.sortedLatencies();
            double p50 = lat.length == 0 ? Double.NaN : Stats.rank(lat, 0.50) / 1e6;
            double p99 = lat.length == 0 ? Double.NaN : Stats.rank(lat, 0.99) / 1e6;
            return new GroupsBenchReport.Load(window.opsPerSecond(), p50, p99, 100.0 * cpu / TimeUnit.SECONDS.toNanos(windowSecs),
                    load.unknown(), load.failed());
        }
    }
}
