package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * Runs a chaos experiment: three servers as child processes, client load throughout, and per
 * round one fault (see {@link Mode}) with its timings measured from the client's and the
 * operator's point of view. Afterwards the counter is read linearizably and compared with the
 * acknowledged increments. Not thread-safe: one run at a time.
 */
final class ChaosRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ChaosRunner.class);

    /** The fault injected each round. */
    enum Mode {
        KILL_LEADER("kill-leader"), PAUSE_LEADER("pause-leader"), KILL_FOLLOWER("kill-follower"), RESTART_ALL("restart-all"),
        /** No fault: load only, counting elections (a fault-free run must have none). */
        NONE("none");

        final String label;

        Mode(String label) {
            this.label = label;
        }

        static Mode parse(String text) {
            for (Mode m : values()) {
                if (m.label.equals(text)) {
                    return m;
                }
            }
            throw CliException.usage("--mode '" + text + "' is not one of kill-leader, pause-leader, kill-follower, restart-all, none");
        }
    }

    record Settings(int rounds, int electionTimeoutMs, Mode mode, Path outDir, int concurrency, int durationSecs, int snapshotIntervalSecs) {
    }

    /**
     * One round's measurements, in milliseconds (NaN when the mode does not define it).
     *
     * @param electionMs         fault → a surviving node leads in a newer term
     * @param firstAckMs         fault → the first increment acknowledged by a node other than the victim
     * @param catchUpMs          restart (or resume) → the victim applied everything committed when it came back
     * @param servingMs          restart → the restarted victim answers (JVM start, storage open, port bound)
     * @param stepDownMs         pause-leader: resume → the old leader no longer claims leadership
     * @param victimAcksAfterLease pause-leader: increments the victim acknowledged after its lease had expired
     */
    record Round(int number, String victim, String newLeader, long newTerm, double electionMs, double firstAckMs, double catchUpMs,
                 double servingMs, double stepDownMs, long victimAcksAfterLease) {
    }

    private final Settings settings;
    private final ProgressLine progress;

    ChaosRunner(Settings settings, ProgressLine progress) {
        this.settings = settings;
        this.progress = progress;
    }

    ChaosReport run() throws Exception {
        Path serversDir = settings.outDir().resolve("servers");
        deleteRecursively(serversDir);
        Files.createDirectories(serversDir);
        int et = settings.electionTimeoutMs();
        long started = System.nanoTime();
        List<Round> rounds = new ArrayList<>();
        long elections = 0;
        try (LocalCluster cluster = new LocalCluster(serversDir, 3, et, settings.snapshotIntervalSecs())) {
            cluster.startAll();
            LocalCluster.NodeView first = cluster.awaitLeader(cluster.endpoints(), 0, 60_000);
            LOG.info("cluster up on {}, leader {} in term {}", cluster.endpoints(), first.endpoint(), first.term());
            long attemptTimeoutMs = Math.max(500, 2L * et);
            LoadGenerator load = new LoadGenerator(cluster.channels(), settings.concurrency(), 10_000, attemptTimeoutMs, false);
            load.start();
            try {
                awaitNewAck(load, 30_000);
                if (settings.mode() == Mode.NONE) {
                    elections = steady(cluster, load);
                } else {
                    for (int i = 1; i <= settings.rounds(); i++) {
                        Round r = round(i, cluster, load);
                        rounds.add(r);
                        progress.update(i, settings.rounds(), String.format(Locale.ROOT, "%s: leader %s, first ack %s, caught up %s; acked %d",
                                settings.mode().label, ms(r.electionMs()), ms(r.firstAckMs()), ms(r.catchUpMs()), load.acked()));
                    }
                }
            } finally {
                load.stop();
                progress.finish();
            }
            CounterClient reader = new CounterClient(cluster.channels(), 30_000, 2_000);
            CounterClient.Outcome value = reader.get();
            long terms = cluster.endpoints().stream().map(e -> cluster.view(e, 1000)).flatMap(Optional::stream)
                    .mapToLong(LocalCluster.NodeView::term).max().orElse(0);
            return new ChaosReport(settings, rounds, load.acked(), load.unknown(), load.failed(), value.ok() ? value.value() : null,
                    value.ok() ? "" : value.line(), load.problems(), elections, terms,
                    (System.nanoTime() - started) / 1e9);
        }
    }

    private Round round(int number, LocalCluster cluster, LoadGenerator load) throws Exception {
        int et = settings.electionTimeoutMs();
        LocalCluster.NodeView leader = cluster.awaitLeader(cluster.endpoints(), 0, 30_000);
        // Every node healthy and the load flowing before the fault.
        for (String e : cluster.endpoints()) {
            cluster.awaitApplied(e, leader.commit(), 30_000);
        }
        awaitNewAck(load, 30_000);
        List<String> all = cluster.endpoints();
        return switch (settings.mode()) {
            case KILL_LEADER -> killOne(number, cluster, load, leader, leader.endpoint());
            case KILL_FOLLOWER -> killOne(number, cluster, load, leader,
                    all.stream().filter(e -> !e.equals(leader.endpoint())).findFirst().orElseThrow());
            case PAUSE_LEADER -> pauseLeader(number, cluster, load, leader, et);
            case RESTART_ALL -> restartAll(number, cluster, load, leader);
            case NONE -> throw new IllegalStateException("no rounds in mode none");
        };
    }

    private Round killOne(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader, String victim) throws Exception {
        boolean leaderDies = victim.equals(leader.endpoint());
        List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
        long t0 = System.nanoTime();
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, leaderDies ? victim : null);
        cluster.server(victim).kill();
        LocalCluster.NodeView newLeader;
        double electionMs = Double.NaN;
        if (leaderDies) {
            newLeader = cluster.awaitLeader(survivors, leader.term(), 30_000);
            electionMs = millisSince(t0);
        } else {
            newLeader = leader;
        }
        long ack = watch.firstAckNanos.get(30, TimeUnit.SECONDS);
        double firstAckMs = (ack - t0) / 1e6;
        if (!leaderDies) {
            newLeader = cluster.awaitLeader(survivors, 0, 30_000);
        }
        double[] restart = restartAndCatchUp(cluster, victim, newLeader.endpoint());
        LOG.info("round {}: killed {}; new leader {} term {} after {} ms, first ack after {} ms, caught up {} ms after restart",
                number, victim, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, restart[1]);
        return new Round(number, victim, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, restart[1], restart[0], Double.NaN, 0);
    }

    private Round pauseLeader(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader, int et) throws Exception {
        String victim = leader.endpoint();
        List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
        ServerProcess server = cluster.server(victim);
        long t0 = System.nanoTime();
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, victim);
        // Anything the victim acknowledges after its lease (at most one election timeout) ran out is a violation.
        load.countAcksFrom(victim, t0 + TimeUnit.MILLISECONDS.toNanos(et));
        server.pause();
        LocalCluster.NodeView newLeader = cluster.awaitLeader(survivors, leader.term(), 30_000);
        double electionMs = millisSince(t0);
        long ack = watch.firstAckNanos.get(30, TimeUnit.SECONDS);
        double firstAckMs = (ack - t0) / 1e6;
        // The pause lasts three election timeouts: the fault itself, not a wait for a condition.
        long resumeAt = t0 + TimeUnit.MILLISECONDS.toNanos(3L * et);
        long left = resumeAt - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
        long target = cluster.view(newLeader.endpoint(), 1000).map(LocalCluster.NodeView::commit).orElse(newLeader.commit());
        long resumed = System.nanoTime();
        server.resume();
        LocalCluster.await(victim + " stepping down", 30_000, () -> cluster.view(victim, 200)
                .map(v -> !v.leads() || v.term() > leader.term()).orElse(false));
        double stepDownMs = millisSince(resumed);
        cluster.awaitApplied(victim, target, 60_000);
        double catchUpMs = millisSince(resumed);
        long violations = load.acksFromWatched();
        load.countAcksFrom(null, 0);
        LOG.info("round {}: paused {}; new leader {} term {} after {} ms, first ack after {} ms; resumed: stepped down in {} ms, caught up in {} ms; {} acks after lease",
                number, victim, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, stepDownMs, catchUpMs, violations);
        return new Round(number, victim, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, catchUpMs, Double.NaN, stepDownMs, violations);
    }

    private Round restartAll(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader) throws Exception {
        long t0 = System.nanoTime();
        for (ServerProcess s : cluster.servers()) {
            s.kill();
        }
        // Only acknowledgements after every server died count (answers already on their way do not).
        LoadGenerator.AckWatch watch = load.watchFirstAck(System.nanoTime(), null);
        long commitBefore = leader.commit();
        long restarted = System.nanoTime();
        cluster.startAll();
        LocalCluster.NodeView newLeader = cluster.awaitLeader(cluster.endpoints(), leader.term(), 60_000);
        double electionMs = millisSince(t0);
        long ack = watch.firstAckNanos.get(60, TimeUnit.SECONDS);
        double firstAckMs = (ack - t0) / 1e6;
        double servingMs = Double.NaN;
        for (String e : cluster.endpoints()) {
            cluster.awaitApplied(e, 0, 60_000);
        }
        servingMs = millisSince(restarted);
        for (String e : cluster.endpoints()) {
            cluster.awaitApplied(e, commitBefore, 60_000);
        }
        double catchUpMs = millisSince(restarted);
        LOG.info("round {}: restarted all; leader {} term {} after {} ms, first ack after {} ms, all caught up {} ms after restart",
                number, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, catchUpMs);
        return new Round(number, "all", newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, catchUpMs, servingMs, Double.NaN, 0);
    }

    /**
     * Restarts {@code victim}; returns how long (from spawn) it took to answer, and to apply what the
     * leader had committed then.
     */
    private static double[] restartAndCatchUp(LocalCluster cluster, String victim, String leader) throws Exception {
        long target = cluster.view(leader, 1000).map(LocalCluster.NodeView::commit).orElse(0L);
        ServerProcess s = cluster.server(victim);
        s.start();
        cluster.awaitApplied(victim, 0, 60_000);
        double servingMs = millisSince(s.startedNanos());
        cluster.awaitApplied(victim, target, 60_000);
        double caughtUp = millisSince(s.startedNanos());
        LOG.info("{} answered {} ms after it was spawned and caught up after {} ms", victim, servingMs, caughtUp);
        return new double[] {servingMs, caughtUp};
    }

    /** Load only, for {@code durationSecs}; returns how many elections happened (term increases). */
    private long steady(LocalCluster cluster, LoadGenerator load) throws InterruptedException, TimeoutException {
        LocalCluster.NodeView leader = cluster.awaitLeader(cluster.endpoints(), 0, 30_000);
        long startTerm = leader.term();
        long maxTerm = startTerm;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.durationSecs());
        int total = settings.durationSecs();
        int lastShown = -1;
        while (System.nanoTime() - end < 0) {
            for (String e : cluster.endpoints()) {
                Optional<LocalCluster.NodeView> v = cluster.view(e, 500);
                if (v.isPresent()) {
                    maxTerm = Math.max(maxTerm, v.get().term());
                }
            }
            int elapsed = total - (int) Math.max(0, TimeUnit.NANOSECONDS.toSeconds(end - System.nanoTime()));
            if (elapsed != lastShown) {
                progress.update(elapsed, total, "fault-free: elections " + (maxTerm - startTerm) + ", acked " + load.acked());
                lastShown = elapsed;
            }
            TimeUnit.MILLISECONDS.sleep(100); // sampling period of the term, not a wait for a condition
        }
        return maxTerm - startTerm;
    }

    private static void awaitNewAck(LoadGenerator load, long timeoutMs) throws TimeoutException, InterruptedException {
        long before = load.acked();
        LocalCluster.await("an acknowledged increment", timeoutMs, () -> load.acked() > before);
    }

    private static double millisSince(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    static String ms(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return v >= 10_000 ? String.format(Locale.ROOT, "%.1f s", v / 1000) : String.format(Locale.ROOT, "%.0f ms", v);
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
