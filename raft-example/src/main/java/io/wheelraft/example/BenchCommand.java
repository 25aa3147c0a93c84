package io.wheelraft.example;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench}: {@code --concurrency} independent increments kept outstanding through one
 * {@code RaftClient} for {@code --duration} seconds after a warm-up; ends with one line
 * {@code N ops/s, p50 X ms, p99 Y ms, p999 Z ms}, counted as raft-bench counts its WheelRaft
 * client ({@link MeasuredWindow}): increments acknowledged inside the measured window (not the
 * warm-up) over the window's length; latencies of those that also started inside it.
 */
@Command(name = "bench", description = "Measure increment throughput and latency against a running cluster.", mixinStandardHelpOptions = true)
final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--peers", required = true, paramLabel = "LIST", description = "The cluster's nodes, HOST:PORT,...")
    String peers;

    @Option(names = "--concurrency", defaultValue = "16", paramLabel = "N", description = "Increments in flight at once.")
    int concurrency;

    @Option(names = "--duration", defaultValue = "30", paramLabel = "S", description = "Seconds measured, after the warm-up.")
    int durationSecs;

    @Option(names = "--warmup", defaultValue = "5", paramLabel = "S", description = "Seconds of load before measuring.")
    int warmupSecs;

    @Option(names = "--groups", paramLabel = "N",
            description = "Spread the increments over counter groups 0..N-1 (servers started with --groups N), a random group per increment (a RaftClient per group, all sharing one connection per server and one timer). Default: the one counter.")
    Integer groups;

    @Option(names = "--every-ms", paramLabel = "MS",
            description = "Also print the throughput of every MS milliseconds, warm-up included, one line each on standard error (see ThroughputTimeline); for watching what a fault does to the writes. Default: off.")
    Integer everyMs;

    @Override
    public Integer call() throws Exception {
        var endpoints = Addresses.endpoints(Addresses.parseList("--peers", peers));
        if (concurrency <= 0 || durationSecs <= 0 || warmupSecs < 0) {
            throw CliException.usage("--concurrency and --duration must be positive and --warmup >= 0");
        }
        if (everyMs != null && everyMs < 10) {
            throw CliException.usage("--every-ms must be at least 10, was " + everyMs);
        }
        if (groups != null && groups < 1) {
            throw CliException.usage("--groups must be at least 1, was " + groups);
        }
        java.util.List<String> groupIds = groups == null ? java.util.List.of(CounterServiceImpl.GROUP_ID) : CounterGroups.groupIds(groups);
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            CounterClient.Outcome probe = new CounterClient(cluster, groupIds.get(0), 10_000, 2_000).get();
            if (probe.kind() == CounterClient.Outcome.Kind.FAIL) {
                throw CliException.failed("cannot reach the cluster: " + probe.reason());
            }
            LoadGenerator load = new LoadGenerator(cluster, groupIds, concurrency, 10_000, 2_000, true);
            long loadStart = System.nanoTime();
            load.start();
            ThroughputTimeline timeline = everyMs == null ? null
                    : new ThroughputTimeline(load::acked, load::unknown, load::failed, loadStart, System.err::println);
            MeasuredWindow window;
            HostCpu.Snapshot hostBefore;
            HostCpu.Snapshot hostAfter;
            try {
                long start = waitUntil(loadStart + TimeUnit.SECONDS.toNanos(warmupSecs), loadStart, timeline); // the warm-up
                hostBefore = HostCpu.read();
                window = load.measure(start, start + TimeUnit.SECONDS.toNanos(durationSecs));
                waitUntil(start + TimeUnit.SECONDS.toNanos(durationSecs), loadStart, timeline); // the window; its end is fixed above
                hostAfter = HostCpu.read();
            } finally {
                load.stop();
            }
            long[] lat = window.sortedLatencies();
            if (window.acknowledged() == 0) {
                throw CliException.failed("no increment was acknowledged during the measured window (" + load.acked() + " acknowledged in total)");
            }
            if (lat.length == 0) {
                throw CliException.failed("no increment both started and ended within the " + durationSecs + " s window; use a longer --duration");
            }
            spec.commandLine().getOut().println(String.format(Locale.ROOT, "%.0f ops/s, p50 %.2f ms, p99 %.2f ms, p999 %.2f ms",
                    window.opsPerSecond(), Stats.rank(lat, 0.50) / 1e6, Stats.rank(lat, 0.99) / 1e6, Stats.rank(lat, 0.999) / 1e6));
            spec.commandLine().getOut().flush();
            if (load.unknown() + load.failed() > 0) {
                System.err.println(Main.NAME + ": note: " + load.unknown() + " unknown and " + load.failed() + " failed increments during the run");
            }
            String steal = stealNote(HostCpu.stealPercent(hostBefore, hostAfter));
            if (steal != null) {
                System.err.println(steal);
            }
            return 0;
        }
    }

    /** From this share of the host's CPU time taken by a hypervisor during the window, {@code bench} says so. */
    static final double STEAL_NOTE_PERCENT = 5;

    /**
     * The note for a window during which a hypervisor took {@code stealPercent} of the host's CPU
     * time, or null below {@link #STEAL_NOTE_PERCENT} (or unknown): on a shared virtual machine the
     * figures then measure the host's other tenants as much as the cluster.
     */
    static String stealNote(double stealPercent) {
        if (Double.isNaN(stealPercent) || stealPercent < STEAL_NOTE_PERCENT) {
            return null;
        }
        return String.format(Locale.ROOT, "%s: note: the hypervisor took %.0f %% of this host's CPU time during the window (CPU steal in /proc/stat); "
                + "the figures measure a contended host, measure again when it is not", Main.NAME, stealPercent);
    }

    /**
     * Sleeps until {@code deadlineNanos}, sampling {@code timeline} (if any) every {@code --every-ms}
     * counted from {@code originNanos}; returns the time it woke at.
     */
    private long waitUntil(long deadlineNanos, long originNanos, ThroughputTimeline timeline) throws InterruptedException {
        long now = System.nanoTime();
        if (timeline == null) {
            TimeUnit.NANOSECONDS.sleep(deadlineNanos - now);
            return System.nanoTime();
        }
        long step = TimeUnit.MILLISECONDS.toNanos(everyMs);
        while (deadlineNanos - now > 0) {
            long nextSample = originNanos + ((now - originNanos) / step + 1) * step;
            long wake = nextSample - deadlineNanos < 0 ? nextSample : deadlineNanos;
            TimeUnit.NANOSECONDS.sleep(wake - now);
            now = System.nanoTime();
            if (now - nextSample >= 0) {
                timeline.sample(now);
                System.err.flush();
            }
        }
        return now;
    }
}
