package io.wheelraft.example;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.timer.Timers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code server}: runs one counter node until the process is stopped (SIGTERM or Ctrl-C shut it
 * down cleanly; SIGKILL is what the chaos runner uses, and the storage survives it).
 */
@Command(name = "server", description = "Run one counter node.", mixinStandardHelpOptions = true)
final class ServerCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);

    @Option(names = "--data", required = true, paramLabel = "DIR", description = "Data directory (created if missing).")
    Path data;

    @Option(names = "--self", required = true, paramLabel = "HOST:PORT", description = "This node's address: Raft, clients and admin.")
    String self;

    @Option(names = "--peers", required = true, paramLabel = "LIST",
            description = "The members, HOST:PORT,... A list without --self starts empty and waits to be added.")
    String peers;

    @Option(names = "--witnesses", paramLabel = "LIST",
            description = "The witnesses among --peers, HOST:PORT,...: they vote but hold no data and never lead. Give every node the "
                    + "same list; the node whose --self is listed runs as a witness (one joining later lists itself without being in --peers). "
                    + "Default: none.")
    String witnesses;

    @Option(names = "--priority", paramLabel = "N",
            description = "This node's election priority: 0 never leads, higher is preferred among caught-up members. Default: 1.")
    Integer priority;

    @Option(names = "--election-timeout-ms", defaultValue = "1000", paramLabel = "N", description = "Silence from the leader after which a follower campaigns, ms (at least 10).")
    int electionTimeoutMs;

    @Option(names = "--snapshot-interval-secs", defaultValue = "3600", paramLabel = "N", description = "0 disables periodic snapshots.")
    int snapshotIntervalSecs;

    @Option(names = "--metrics-port", paramLabel = "P", description = "Serve Prometheus metrics on http://HOST:P/metrics. Default: off.")
    Integer metricsPort;

    @Option(names = "--groups", paramLabel = "N",
            description = "Host N counters, groups 0..N-1, one replica of each in this process, on one engine (one store, one port). Default: the one counter (group 'counter').")
    Integer groups;

    /** Start, then stop at once: used to record a class-data-sharing archive for faster restarts (see ServerProcess). */
    @Option(names = "--exit-when-started", hidden = true)
    boolean exitWhenStarted;

    @Override
    public Integer call() throws Exception {
        PeerId selfId = Addresses.parse("--self", self);
        List<PeerId> members = Addresses.parseList("--peers", peers);
        List<PeerId> witnessList = WitnessList.parse(witnesses, selfId, members);
        boolean selfWitness = witnessList.contains(selfId);
        if (SelfAddress.check(selfId, members, SelfAddress.Resolver.SYSTEM) == SelfAddress.Membership.NOT_LISTED) {
            LOG.warn("{}", SelfAddress.notListedLine(selfId, members, selfWitness));
        }
        if (priority != null && priority < 0) {
            throw CliException.usage("--priority must be 0 (never leads) or more, was " + priority);
        }
        if (priority != null && priority > 0 && selfWitness) {
            throw CliException.usage("--priority " + priority + " is given to " + selfId + ", a witness, which never leads; leave --priority out");
        }
        if (electionTimeoutMs < 10) {
            throw CliException.usage("--election-timeout-ms must be at least 10, was " + electionTimeoutMs);
        }
        if (snapshotIntervalSecs < 0) {
            throw CliException.usage("--snapshot-interval-secs must be >= 0, was " + snapshotIntervalSecs);
        }
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
            throw CliException.usage("--metrics-port " + metricsPort + " is outside 0..65535");
        }
        if (groups != null && (groups < 1 || groups > MAX_GROUPS)) {
            throw CliException.usage("--groups must be between 1 and " + MAX_GROUPS + ", was " + groups);
        }
        if (groups != null && (witnesses != null || priority != null)) {
            // refused rather than ignored: a node that silently held data or led against its
            // operator's word would be worse than one that does not start
            throw CliException.usage("--witnesses and --priority are not supported with --groups yet; start the many-groups server "
                    + "without them");
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ProcessMetrics.bind(registry, Timers.sharedStats());
        MetricsEndpoint metrics = metricsPort == null ? null : MetricsEndpoint.start(selfId.host(), metricsPort, registry);
        if (groups != null) {
            return runGroups(selfId, members, registry, metrics);
        }
        CounterServer server;
        try {
            server = CounterServer.start(new CounterServer.Settings(data, selfId, members, electionTimeoutMs, snapshotIntervalSecs,
                    witnessList, priority), registry);
        } catch (RuntimeException e) {
            if (metrics != null) {
                metrics.close();
            }
            throw e;
        }
        if (exitWhenStarted) {
            server.close();
            if (metrics != null) {
                metrics.close();
            }
            return 0;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stopping counter node {}", selfId);
            server.close();
            if (metrics != null) {
                metrics.close();
            }
            stopped.countDown();
        }, "counter-shutdown"));
        stopped.await();
        return 0;
    }

    /** The most groups one process may be asked to host: far above what fits in memory today. */
    static final int MAX_GROUPS = 1_000_000;

    /** {@code --groups N}: the counters 0..N-1 on one engine, until the process is stopped. */
    private int runGroups(PeerId selfId, List<PeerId> members, PrometheusMeterRegistry registry, MetricsEndpoint metrics)
            throws InterruptedException {
        CounterGroups hosted;
        try {
            hosted = CounterGroups.start(new CounterGroups.Settings(data, selfId, members, electionTimeoutMs, snapshotIntervalSecs, groups),
                    registry);
        } catch (RuntimeException e) {
            if (metrics != null) {
                metrics.close();
            }
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            hosted.close();
            if (metrics != null) {
                metrics.close();
            }
            stopped.countDown();
        };
        if (exitWhenStarted) {
            stop.run();
            return 0;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stopping counter node {} ({} groups)", selfId, groups);
            stop.run();
        }, "counter-shutdown"));
        stopped.await();
        return 0;
    }
}
