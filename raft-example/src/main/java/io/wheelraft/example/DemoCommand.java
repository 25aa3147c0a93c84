package io.wheelraft.example;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code demo}: the one-command tour. A three-node cluster on this machine, a stream of
 * increments, the leader killed, a new leader, the old node restarted and caught up, the final
 * value checked against the acknowledged increments; then everything is stopped and removed.
 * Exit 0 when the value matches.
 */
@Command(name = "demo", description = "A local three-node cluster, a leader kill, re-election and catch-up, checked.", mixinStandardHelpOptions = true)
final class DemoCommand implements java.util.concurrent.Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--election-timeout-ms", defaultValue = "1000", paramLabel = "T", description = "The servers' election timeout, ms.")
    int electionTimeoutMs;

    @Option(names = "--keep", defaultValue = "false", description = "Keep the data directories and server logs instead of deleting them.")
    boolean keep;

    private PrintWriter out;
    private long t0;

    @Override
    public Integer call() throws Exception {
        if (electionTimeoutMs < 10) {
            throw CliException.usage("--election-timeout-ms must be at least 10, was " + electionTimeoutMs);
        }
        out = spec.commandLine().getOut();
        t0 = System.nanoTime();
        Path dir = Files.createTempDirectory("wheelraft-demo-");
        boolean ok;
        try (LocalCluster cluster = new LocalCluster(dir, 3, electionTimeoutMs, 3600)) {
            ok = tour(cluster, dir);
        } finally {
            ChildProcesses.killAll();
            if (!keep) {
                ChaosRunner.deleteRecursively(dir);
            }
        }
        say(keep ? "Stopped the three servers; data and logs kept in " + dir : "Stopped the three servers and removed " + dir);
        return ok ? 0 : 1;
    }

    private boolean tour(LocalCluster cluster, Path dir) throws Exception {
        say("Starting three counter servers on " + String.join(", ", cluster.endpoints()) + " (data and logs in " + dir + ")");
        cluster.startAll();
        LocalCluster.NodeView leader = cluster.awaitLeader(cluster.endpoints(), 0, 60_000);
        say("Elected: " + leader.endpoint() + " leads in term " + leader.term());
        printStatus(cluster);

        LoadGenerator load = new LoadGenerator(cluster.channels(), 4, 10_000, Math.max(500, 2L * electionTimeoutMs), false);
        load.start();
        try {
            long before = load.acked();
            LocalCluster.await("increments", 30_000, () -> load.acked() > before + 200);
            say("Four clients are incrementing the counter: " + load.acked() + " increments acknowledged so far");

            String victim = leader.endpoint();
            List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
            say("Killing the leader " + victim + " with SIGKILL...");
            long kill = System.nanoTime();
            LoadGenerator.AckWatch watch = load.watchFirstAck(kill, victim);
            cluster.server(victim).kill();
            LocalCluster.NodeView next = cluster.awaitLeader(survivors, leader.term(), 30_000);
            double electedMs = (System.nanoTime() - kill) / 1e6;
            long firstAck = watch.firstAckNanos.get(30, TimeUnit.SECONDS);
            say(String.format(Locale.ROOT, "New leader: %s in term %d, %.0f ms after the kill; clients were acknowledged again after %.0f ms",
                    next.endpoint(), next.term(), electedMs, (firstAck - kill) / 1e6));
            printStatus(cluster);

            long target = cluster.view(next.endpoint(), 1000).map(LocalCluster.NodeView::commit).orElse(next.commit());
            say("Restarting " + victim + " on its old data directory...");
            ServerProcess s = cluster.server(victim);
            s.start();
            LocalCluster.NodeView caught = cluster.awaitApplied(victim, target, 60_000);
            say(String.format(Locale.ROOT, "%s is back as a %s and caught up to index %d, %.1f s after it was started",
                    victim, caught.role(), target, (System.nanoTime() - s.startedNanos()) / 1e9));
            long more = load.acked();
            LocalCluster.await("more increments", 30_000, () -> load.acked() > more + 200);
        } finally {
            load.stop();
        }
        say("Stopped the clients: " + load.acked() + " increments acknowledged, " + load.unknown() + " with unknown outcome, "
                + load.failed() + " failed");
        printStatus(cluster);
        CounterClient.Outcome value = new CounterClient(cluster.channels(), 30_000, 2_000).get();
        if (!value.ok()) {
            say("Could not read the final value: " + value.line());
            return false;
        }
        long acked = load.acked();
        boolean ok = value.value() >= acked && value.value() <= acked + load.unknown();
        say("Final value (a linearizable read): " + value.value() + (ok
                ? (load.unknown() == 0 ? " = the acknowledged increments: none lost, none applied twice."
                : " is within the acknowledged increments plus those of unknown outcome: none lost, none applied twice.")
                : " DOES NOT MATCH the " + acked + " acknowledged increments!"));
        return ok;
    }

    private void printStatus(LocalCluster cluster) {
        for (String e : cluster.endpoints()) {
            String line = cluster.view(e, 1000).map(v -> String.format(Locale.ROOT, "%s %s term=%d commit=%d last=%d leader=%s",
                    e, v.role(), v.term(), v.commit(), v.last(), v.leader().isEmpty() ? "none" : v.leader()))
                    .orElse(e + " down");
            out.println("           " + line);
        }
        out.flush();
    }

    private void say(String line) {
        out.println(String.format(Locale.ROOT, "[%5.1f s] %s", (System.nanoTime() - t0) / 1e9, line));
        out.flush();
    }
}
