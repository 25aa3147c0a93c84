package io.wheelraft.example;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code groups-bench}: what many Raft groups cost. For each group count, starts three
 * {@code server --groups N} processes on this machine (real gRPC and RocksDB, each hosting one
 * replica of every group), times until every group has a leader, then runs the chosen phases in
 * order, each bounded in time:
 * <ul>
 *   <li>{@code idle} ({@link IdlePhase}): once every replica reports quiet (or a bounded wait ran
 *       out), CPU over a window, memory, heap after a full collection, threads, timer-wheel entries
 *       and quiet replicas per process; a one-group run first gives the heap baseline that heap per
 *       replica is counted from;</li>
 *   <li>{@code writes} ({@link WritesPhase}): increment throughput to one group against the same
 *       load spread over random groups;</li>
 *   <li>{@code kill} ({@link KillPhase}, last: it leaves two processes): {@code kill -9} of the
 *       busiest leader under load, the time until each of its groups is led again, and a check that
 *       no acknowledged increment was lost.</li>
 * </ul>
 * Writes {@code many-groups.md} and charts to {@code --out} after every group count, so a long run
 * that fails late keeps what it measured. Linux only (it reads {@code /proc} and runs {@code jcmd}).
 *
 * <p>Not thread-safe: runs once from the command line.
 */
@Command(name = "groups-bench", description = "Measure what many groups cost: three server --groups N processes on this machine, idle, under writes and through a kill -9.",
        mixinStandardHelpOptions = true)
final class GroupsBenchCommand implements Callable<Integer> {

    /** What a run can measure, in the order run. */
    enum Phase { IDLE, WRITES, KILL }

    @Spec
    CommandSpec spec;

    @Option(names = "--groups", defaultValue = "1000,10000", split = ",", paramLabel = "N[,N...]", description = "Group counts to measure, in order.")
    List<Integer> groupCounts;

    @Option(names = "--phases", defaultValue = "idle,writes,kill", split = ",", paramLabel = "P[,P...]",
            description = "Which of idle, writes, kill to run at each count (always in that order; the time until all led is always measured).")
    List<String> phaseNames;

    @Option(names = "--election-timeout-ms", defaultValue = "1000", paramLabel = "N", description = "The servers' election timeout.")
    int electionTimeoutMs;

    @Option(names = "--settle-secs", defaultValue = "10", paramLabel = "S", description = "Wait after every group has a leader, before measuring idle.")
    int settleSecs;

    @Option(names = "--quiet-wait-secs", defaultValue = "30", paramLabel = "S",
            description = "Then wait at most this long for every replica to report quiet; idle is measured anyway after it, and the table says so.")
    int quietWaitSecs;

    @Option(names = "--window-secs", defaultValue = "30", paramLabel = "S", description = "The window over which idle CPU is measured.")
    int windowSecs;

    @Option(names = "--heap-baseline", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Measure each process's heap with one group first, to count heap per replica from (with the idle phase; default on).")
    boolean heapBaseline;

    @Option(names = "--concurrency", defaultValue = "128", paramLabel = "N", description = "Increments outstanding in the writes and kill phases.")
    int concurrency;

    @Option(names = "--write-groups", defaultValue = "256", paramLabel = "N",
            description = "Write to at most this many groups, a random sample (each written group has a RaftClient in this process; they share one connection per server and one timer).")
    int writeGroups;

    // 30 s, not less: the spread path of servers and client is still being compiled after a few
    // seconds on a busy machine, and a 3 s warm-up measured the compiler (11 % of one group's
    // throughput at 10,000 groups, against 26 % with 30 s and 24 % with 60 s).
    @Option(names = "--write-warmup-secs", defaultValue = "30", paramLabel = "S", description = "Load before each measured write window, and before the kill.")
    int writeWarmupSecs;

    @Option(names = "--write-secs", defaultValue = "10", paramLabel = "S", description = "Each measured write window (one group, then spread).")
    int writeSecs;

    /**
     * Each poll visits every replica of both survivors while they run the failover it watches;
     * the failover times come from the servers' own records, so the poll's pace bounds only the
     * "seen by polling" column. At 10,000 groups (servers on C1 alone) p99 was 1.00 and 1.14 s
     * polling every 250 ms against 1.17 and 1.65 s every 25 ms, two pairs taking turns.
     */
    @Option(names = "--kill-poll-ms", defaultValue = "250", paramLabel = "MS", description = "How often the survivors are asked which groups "
            + "they lead after the kill (each ask visits every replica of both; the failover times come from the servers' own records).")
    int killPollMs;

    @Option(names = "--kill-timeout-secs", defaultValue = "30", paramLabel = "S", description = "Stop waiting for the killed process's groups to be led again after this.")
    int killTimeoutSecs;

    @Option(names = "--kill-write-secs", defaultValue = "5", paramLabel = "S", description = "Keep writing this long after they are (or the wait ran out), before checking.")
    int killWriteSecs;

    @Option(names = "--kill-rounds", defaultValue = "1", paramLabel = "N",
            description = "Kills of the same process in a row at each count: after each but the last it is started again and the "
                    + "cluster left to settle (every group led, every unwritten group quiet). The table gives the last; the earlier "
                    + "ones are listed after it (a JVM's first failover also compiles the code of its paths).")
    int killRounds;

    @Option(names = "--kill-settle-secs", defaultValue = "180", paramLabel = "S",
            description = "With --kill-rounds: how long to wait for the cluster to settle after each restart; the next kill comes then anyway.")
    int killSettleSecs;

    @Option(names = "--leader-timeout-secs", defaultValue = "300", paramLabel = "S", description = "Give up when not every group has a leader by then.")
    int leaderTimeoutSecs;

    @Option(names = "--heap", defaultValue = "2g", paramLabel = "SIZE",
            description = "Each server's heap (-Xmx and -Xms; the serial and parallel collectors' young generation a quarter of it, at most 512m).")
    String heap;

    @Option(names = "--server-gc", defaultValue = "serial", paramLabel = "GC",
            converter = GcConverter.class, description = "Each server's garbage collector: serial, parallel or g1 (default: ${DEFAULT-VALUE}).")
    ServerJvm.Collector serverGc;

    @Option(names = "--server-jvm-option", paramLabel = "OPTION", showDefaultValue = CommandLine.Help.Visibility.NEVER,
            description = "A further JVM option for each server only, after the heap and collector options, the heap on transparent huge pages "
                    + "where the kernel offers them, and C1 alone; repeat it for more (e.g. --server-jvm-option=-XX:AOTCache=server.aot, "
                    + "-XX:-UseTransparentHugePages to keep 4 KiB pages, or -XX:TieredStopAtLevel=4 for the JVM's default C2). Default: none.")
    List<String> serverJvmOptions = new ArrayList<>();

    @Option(names = "--out", defaultValue = "target/groups-bench", paramLabel = "DIR", description = "Where the table and charts are written.")
    Path out;

    /** The servers' JVM, built once from the options when they are checked ({@link #validate}). */
    private ServerJvm jvm;

    ServerJvm serverJvm() {
        try {
            ServerJvm.heapBytes(heap);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--heap " + e.getMessage());
        }
        try {
            return new ServerJvm(heap, serverGc, serverJvmOptions, ServerProcess.TRANSPARENT_HUGE_PAGES);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--server-jvm-option: " + e.getMessage());
        }
    }

    /** Reads {@code --server-gc} in any case; anything else is a usage error naming the choices. */
    static final class GcConverter implements CommandLine.ITypeConverter<ServerJvm.Collector> {
        @Override
        public ServerJvm.Collector convert(String value) {
            try {
                return ServerJvm.Collector.valueOf(value.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not one of serial, parallel, g1");
            }
        }
    }

    /** The phases named, as a set; a name that is none of them is a usage error naming it. */
    static Set<Phase> parsePhases(List<String> names) {
        EnumSet<Phase> phases = EnumSet.noneOf(Phase.class);
        for (String n : names) {
            String name = n.strip();
            try {
                phases.add(Phase.valueOf(name.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--phases: '" + name + "' is not one of idle, writes, kill");
            }
        }
        if (phases.isEmpty()) {
            throw CliException.usage("--phases names no phase; use idle, writes, kill or some of them");
        }
        return phases;
    }

    @Override
    public Integer call() throws Exception {
        Set<Phase> phases = validate();
        Files.createDirectories(out);
        PrintWriter stdout = spec.commandLine().getOut();
        GroupsBenchReport.Setup setup = new GroupsBenchReport.Setup(commandLine(phases), electionTimeoutMs, jvm, settleSecs, quietWaitSecs, windowSecs);
        String niceProblem = OwnThreadsNice.apply(jvm.javaThreadNice()); // the client at the servers' priority
        if (!niceProblem.isEmpty()) {
            System.err.println(Main.NAME + ": " + niceProblem);
        }
        List<Long> baseline = null;
        if (phases.contains(Phase.IDLE) && heapBaseline) {
            System.err.println(Main.NAME + ": measuring the one-group heap baseline...");
            baseline = measureBaseline();
            stdout.println("1 group (baseline): heap after GC " + String.join(" / ", baseline.stream()
                    .map(h -> String.format(Locale.ROOT, "%.1f", h / (1024.0 * 1024.0))).toList()) + " MiB");
            stdout.flush();
        }
        List<GroupsBenchReport.Row> rows = new ArrayList<>();
        for (int n : groupCounts) {
            System.err.println(Main.NAME + ": measuring " + n + " groups x 3 processes (" + phases + ")...");
            rows.add(measure(n, phases));
            stdout.println(GroupsBenchReport.summaryLine(rows.get(rows.size() - 1)));
            GroupsBenchReport.write(out, setup, baseline, rows); // after every count: a late failure keeps the rest
            stdout.flush();
        }
        stdout.println("wrote " + out.resolve(GroupsBenchReport.TABLE) + " and its charts");
        stdout.flush();
        return 0;
    }

    private Set<Phase> validate() {
        if (groupCounts.isEmpty() || groupCounts.stream().anyMatch(n -> n < 1 || n > ServerCommand.MAX_GROUPS)) {
            throw CliException.usage("--groups needs counts between 1 and " + ServerCommand.MAX_GROUPS + ", was " + groupCounts);
        }
        Set<Phase> phases = parsePhases(phaseNames);
        if (electionTimeoutMs < 10 || settleSecs < 0 || quietWaitSecs < 0 || windowSecs < 1 || leaderTimeoutSecs < 1) {
            throw CliException.usage("--election-timeout-ms must be >= 10, --settle-secs and --quiet-wait-secs >= 0, --window-secs and --leader-timeout-secs >= 1");
        }
        if (concurrency < 1 || writeGroups < 1 || writeWarmupSecs < 0 || writeSecs < 1) {
            throw CliException.usage("--concurrency, --write-groups and --write-secs must be >= 1, --write-warmup-secs >= 0");
        }
        if (killPollMs < 1 || killTimeoutSecs < 1 || killWriteSecs < 0 || killRounds < 1 || killSettleSecs < 1) {
            throw CliException.usage("--kill-poll-ms, --kill-timeout-secs, --kill-rounds and --kill-settle-secs must be >= 1, --kill-write-secs >= 0");
        }
        jvm = serverJvm(); // a bad --heap or --server-jvm-option is refused with the other options, before anything starts
        if (!Files.isDirectory(Path.of("/proc/self"))) {
            throw CliException.failed("groups-bench reads /proc: it runs on Linux only");
        }
        return phases;
    }

    /** The options that shape the figures, for the table. */
    String commandLine(Set<Phase> phases) {
        StringBuilder b = new StringBuilder("groups-bench --groups ")
                .append(String.join(",", groupCounts.stream().map(String::valueOf).toList()))
                .append(" --phases ").append(String.join(",", phases.stream().map(p -> p.name().toLowerCase(Locale.ROOT)).toList()))
                .append(" --election-timeout-ms ").append(electionTimeoutMs).append(" --leader-timeout-secs ").append(leaderTimeoutSecs)
                .append(" --heap ").append(heap).append(" --server-gc ").append(serverGc.displayName());
        serverJvmOptions.forEach(o -> b.append(" --server-jvm-option=").append(o));
        if (phases.contains(Phase.IDLE)) {
            b.append(" --settle-secs ").append(settleSecs).append(" --quiet-wait-secs ").append(quietWaitSecs)
                    .append(" --window-secs ").append(windowSecs).append(heapBaseline ? "" : " --no-heap-baseline");
        }
        if (phases.contains(Phase.WRITES) || phases.contains(Phase.KILL)) {
            b.append(" --concurrency ").append(concurrency).append(" --write-groups ").append(writeGroups)
                    .append(" --write-warmup-secs ").append(writeWarmupSecs);
        }
        if (phases.contains(Phase.WRITES)) {
            b.append(" --write-secs ").append(writeSecs);
        }
        if (phases.contains(Phase.KILL)) {
            b.append(" --kill-poll-ms ").append(killPollMs).append(" --kill-timeout-secs ").append(killTimeoutSecs)
                    .append(" --kill-write-secs ").append(killWriteSecs).append(killRounds == 1 ? "" : " --kill-rounds " + killRounds + " --kill-settle-secs " + killSettleSecs);
        }
        return b.toString();
    }

    /** Each process's heap after a full collection when it hosts one group. */
    private List<Long> measureBaseline() throws Exception {
        try (GroupsBenchCluster cluster = GroupsBenchCluster.start(out.resolve("work-baseline"), 1, jvm, electionTimeoutMs)) {
            if (!cluster.awaitLeaders(leaderTimeoutSecs).converged()) {
                throw CliException.failed("the one-group baseline elected no leader within " + leaderTimeoutSecs + " s");
            }
            return IdlePhase.heapAfterGc(cluster, settleSecs);
        }
    }

    /** One group count: start, wait for leaders, run the phases, stop, clean up. */
    private GroupsBenchReport.Row measure(int groups, Set<Phase> phases) throws Exception {
        HostCpu.Snapshot hostBefore = HostCpu.read();
        try (GroupsBenchCluster cluster = GroupsBenchCluster.start(out.resolve("work-" + groups), groups, jvm, electionTimeoutMs)) {
            GroupsBenchCluster.LeaderWait wait = cluster.awaitLeaders(leaderTimeoutSecs);
            GroupsBenchReport.Idle idle = phases.contains(Phase.IDLE) ? IdlePhase.measure(cluster, settleSecs, quietWaitSecs, windowSecs) : null;
            int leadersAtEnd = cluster.leaders();
            // the same sample for both write phases; seeded by the count, so a rerun writes the same groups
            int[] sample = GroupSample.pick(groups, writeGroups, new Random(groups));
            GroupsBenchReport.Writes writes = phases.contains(Phase.WRITES)
                    ? WritesPhase.measure(cluster, sample, concurrency, writeWarmupSecs, writeSecs) : null;
            GroupsBenchReport.Kill kill = phases.contains(Phase.KILL)
                    ? KillPhase.run(cluster, sample, concurrency, writeWarmupSecs, killWriteSecs, killPollMs, killTimeoutSecs, killRounds, killSettleSecs) : null;
            if (kill != null && (kill.withinTarget() < kill.victimLed() || kill.writes().lostIncrements() > 0)) {
                // A late or lossy failover is what someone will want to read the servers' logs about.
                cluster.keepLogs();
                System.err.println("wheelraft-counter: kept the servers' logs of the " + groups + "-group run in " + cluster.work());
            }
            return new GroupsBenchReport.Row(groups, wait.allHostedMs(), wait.allLedMs(), leadersAtEnd, idle, writes, kill,
                    HostCpu.stealPercent(hostBefore, HostCpu.read()));
        }
    }
}
