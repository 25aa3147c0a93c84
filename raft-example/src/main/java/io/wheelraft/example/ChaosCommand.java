package io.wheelraft.example;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code chaos}: three servers (with {@code --witness}: two data servers and a witness) as child processes, client load at concurrency 16, one fault per
 * round; writes report.json, report.md, timeline.png, histogram.png and report.html to
 * {@code --out}. Exit 0 when the invariants hold (nothing lost or doubled, the history
 * linearizable), 1 otherwise; a run cut short (timeout, error, Ctrl-C) still writes what it
 * measured, marked incomplete. Every child is killed at the end, also on Ctrl-C.
 * {@code --link-loss}, {@code --link-delay} and {@code --link-jitter} fault every link between the
 * servers for the whole run (see {@link LinkFaults}).
 */
@Command(name = "chaos", description = "Break a local three-node cluster (or two data nodes and a witness) under load and measure recovery.",
        mixinStandardHelpOptions = true)
final class ChaosCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--rounds", defaultValue = "10", paramLabel = "N", description = "Faults injected, one per round.")
    int rounds;

    @Option(names = "--election-timeout-ms", defaultValue = "1000", paramLabel = "T", description = "The servers' election timeout, ms.")
    int electionTimeoutMs;

    @Option(names = "--mode", defaultValue = "kill-leader", paramLabel = "MODE",
            description = "kill-leader | pause-leader | isolate-leader (Linux, root) | kill-follower | restart-all | corrupt-follower "
                    + "| disk-full (Linux, root) "
                    + "| none (fault-free, see --duration)")
    String mode;

    @Option(names = "--out", defaultValue = "chaos-report", paramLabel = "DIR", description = "Where the report, histogram and server logs go.")
    Path out;

    @Option(names = "--concurrency", defaultValue = "16", paramLabel = "N", description = "Clients incrementing during the run.")
    int concurrency;

    @Option(names = "--settle-ms", defaultValue = "" + ChaosRunner.Settings.DEFAULT_SETTLE_MS, paramLabel = "MS",
            description = "Before each fault, steady load with every node caught up for MS ms (a node restarted in the previous round "
                    + "has then served that long).")
    int settleMs;

    @Option(names = "--duration", defaultValue = "60", paramLabel = "S", description = "Length of a fault-free run (--mode none), seconds.")
    int durationSecs;

    @Option(names = "--snapshot-interval-secs", defaultValue = "3600", paramLabel = "N", description = "The servers' snapshot interval; 0 disables periodic snapshots.")
    int snapshotIntervalSecs;

    @Option(names = "--witness", defaultValue = "false",
            description = "Run two data nodes and a witness (n3: votes, holds no data, never leads) instead of three data nodes; "
                    + "with --mode kill-leader, kill-follower (the data follower and the witness in turn) or none.")
    boolean witness;

    @Option(names = "--link-loss", defaultValue = "0", paramLabel = "PCT",
            description = "Drop PCT percent of the packets each server sends to another server, at random, for the whole run (0-99; "
                    + "Linux, root, nft: the servers run in network namespaces).")
    int linkLossPercent;

    @Option(names = "--link-delay", defaultValue = "0", paramLabel = "MS",
            description = "Delay every chunk of bytes between two servers by MS ms, order kept, for the whole run (through a relay in "
                    + "this process; Linux, root, nft).")
    int linkDelayMs;

    @Option(names = "--link-jitter", defaultValue = "0", paramLabel = "MS",
            description = "Draw each chunk's delay uniformly from [delay - MS, delay + MS] (at most --link-delay).")
    int linkJitterMs;

    @Option(names = "--no-progress", defaultValue = "false", description = "No progress bar on standard error.")
    boolean noProgress;

    /** The link fault asked for, refused with one line (exit 2) when its values or its mode cannot run. */
    private LinkFault linkFault(ChaosRunner.Mode m) {
        LinkFault links = new LinkFault(linkLossPercent, linkDelayMs, linkJitterMs);
        String invalid = links.invalidReason();
        if (invalid != null) {
            throw CliException.usage(invalid);
        }
        if (links.any() && !ChaosRunner.Settings.LINK_FAULT_MODES.contains(m)) {
            throw CliException.usage("--link-loss/--link-delay do not run with --mode " + m.label
                    + " (its tmpfs and the servers' network namespaces were never tried together); use another mode");
        }
        return links;
    }

    @Override
    public Integer call() throws Exception {
        ChaosRunner.Mode m = ChaosRunner.Mode.parse(mode);
        if (rounds <= 0) {
            throw CliException.usage("--rounds must be positive, was " + rounds);
        }
        if (electionTimeoutMs < 10) {
            throw CliException.usage("--election-timeout-ms must be at least 10, was " + electionTimeoutMs);
        }
        if (concurrency <= 0 || durationSecs <= 0 || snapshotIntervalSecs < 0) {
            throw CliException.usage("--concurrency and --duration must be positive and --snapshot-interval-secs >= 0");
        }
        if (settleMs < 0 || settleMs > 600_000) {
            throw CliException.usage("--settle-ms must be 0 to 600000 ms, was " + settleMs);
        }
        if (witness && !ChaosRunner.Settings.WITNESS_MODES.contains(m)) {
            throw CliException.usage("--witness runs with --mode kill-leader, kill-follower or none, not " + m.label);
        }
        LinkFault links = linkFault(m);
        if (m == ChaosRunner.Mode.DISK_FULL && TmpfsDisk.unsupportedReason() != null) {
            throw CliException.failed("--mode disk-full cannot run here: " + TmpfsDisk.unsupportedReason());
        }
        if (m == ChaosRunner.Mode.ISOLATE_LEADER && NetworkNamespaces.unsupportedReason() != null) {
            throw CliException.failed("--mode isolate-leader cannot run here: " + NetworkNamespaces.unsupportedReason());
        }
        if (links.any()) {
            String why = NetworkNamespaces.unsupportedReason();
            if (why == null) {
                why = LinkFaults.unsupportedReason();
            }
            if (why != null) {
                throw CliException.failed("--link-loss/--link-delay cannot run here: " + why);
            }
        }
        Path dir = out.toAbsolutePath().normalize();
        try {
            CounterServer.prepareDataDir(dir);
        } catch (CliException e) {
            throw CliException.failed("--out: " + e.getMessage());
        }
        ChaosRunner.Settings settings = new ChaosRunner.Settings(rounds, electionTimeoutMs, m, dir, concurrency, durationSecs, snapshotIntervalSecs,
                witness, links, settleMs);
        ChaosRunner runner = new ChaosRunner(settings, new ProgressLine(System.err, !noProgress));
        // Ctrl-C or SIGTERM: write what was measured so far, marked incomplete (the child servers are
        // killed by ChildProcesses' own hook).
        Thread onSignal = new Thread(() -> {
            ChaosReport partial = runner.partialReport("interrupted (Ctrl-C or SIGTERM)", ChaosRunner.PARTIAL_CHECK_BUDGET);
            if (partial != null) {
                try {
                    partial.write(dir);
                    System.err.println("\nchaos run interrupted; partial report: " + dir.resolve("report.html"));
                } catch (Exception e) {
                    System.err.println("\nchaos run interrupted; the partial report could not be written: " + e);
                }
            }
        }, "chaos-partial-report");
        ChaosCharts.warmUp();
        Runtime.getRuntime().addShutdownHook(onSignal);
        ChaosReport report;
        try {
            report = runner.run();
        } finally {
            ChildProcesses.killAll();
        }
        report.write(dir);
        try {
            Runtime.getRuntime().removeShutdownHook(onSignal);
        } catch (IllegalStateException shuttingDown) {
            // The hook already ran or runs: it finds the report made and writes nothing.
        }
        spec.commandLine().getOut().println(report.summary());
        spec.commandLine().getOut().println("report: " + dir.resolve("report.html"));
        spec.commandLine().getOut().flush();
        if (!report.complete()) {
            throw CliException.failed("chaos run incomplete: " + report.measured().incompleteReason() + " (partial report in " + dir
                    + ", server logs in " + dir.resolve("servers") + ")");
        }
        return report.invariantsHold() ? 0 : 1;
    }
}
