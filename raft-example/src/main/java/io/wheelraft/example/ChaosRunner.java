package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
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
        /**
         * Drop every packet to and from the leader, silently (no reset), for three election
         * timeouts, then heal; each server runs in its own network namespace (Linux, root).
         */
        ISOLATE_LEADER("isolate-leader"),
        /** Stop a follower, flip 64 bytes of its WAL or largest SST, restart it; it must be repaired from the cluster. */
        CORRUPT_FOLLOWER("corrupt-follower"),
        /** Fill a follower's tmpfs under load, change the term, ask it for a snapshot; it must stop, then rejoin once freed (Linux, root). */
        DISK_FULL("disk-full"),
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
            throw CliException.usage("--mode '" + text + "' is not one of kill-leader, pause-leader, isolate-leader, kill-follower, "
                    + "restart-all, corrupt-follower, disk-full, none");
        }
    }

    /**
     * @param witness run two data nodes and a witness (n3) instead of three data nodes
     * @param links   the fault on every link between servers for the whole run ({@link LinkFault#NONE} for clean links)
     * @param settleMs steady load, every node caught up, before each round's fault
     */
    record Settings(int rounds, int electionTimeoutMs, Mode mode, Path outDir, int concurrency, int durationSecs, int snapshotIntervalSecs,
                    boolean witness, LinkFault links, int settleMs) {
        /** {@code chaos --settle-ms}'s default. */
        static final int DEFAULT_SETTLE_MS = 3000;

        Settings(int rounds, int electionTimeoutMs, Mode mode, Path outDir, int concurrency, int durationSecs, int snapshotIntervalSecs,
                 boolean witness, LinkFault links) {
            this(rounds, electionTimeoutMs, mode, outDir, concurrency, durationSecs, snapshotIntervalSecs, witness, links, DEFAULT_SETTLE_MS);
        }

        Settings(int rounds, int electionTimeoutMs, Mode mode, Path outDir, int concurrency, int durationSecs, int snapshotIntervalSecs) {
            this(rounds, electionTimeoutMs, mode, outDir, concurrency, durationSecs, snapshotIntervalSecs, false);
        }

        Settings(int rounds, int electionTimeoutMs, Mode mode, Path outDir, int concurrency, int durationSecs, int snapshotIntervalSecs,
                 boolean witness) {
            this(rounds, electionTimeoutMs, mode, outDir, concurrency, durationSecs, snapshotIntervalSecs, witness, LinkFault.NONE);
        }

        /**
         * The modes that run with a {@link LinkFault}: all whose servers can live in network
         * namespaces. disk-full is not among them: its tmpfs and the namespaces were never tried together.
         */
        static final java.util.Set<Mode> LINK_FAULT_MODES = java.util.EnumSet.complementOf(java.util.EnumSet.of(Mode.DISK_FULL));

        /** True when the servers run in their own network namespaces. */
        boolean inNamespaces() {
            return mode == Mode.ISOLATE_LEADER || links.any();
        }

        /** The modes a run with a witness supports: the witness holds no data to corrupt, fill or repair. */
        static final java.util.Set<Mode> WITNESS_MODES = java.util.EnumSet.of(Mode.KILL_LEADER, Mode.KILL_FOLLOWER, Mode.NONE);

        /** How the report names the cluster. */
        String topology() {
            return witness ? "two data nodes (n1, n2) and a witness (n3)" : "three data nodes";
        }
    }

    /**
     * One round's measurements, in milliseconds (NaN when the mode does not define it). Nodes are
     * named n1..n3 (see the report's legend for their addresses).
     *
     * @param electionMs         fault → a surviving node leads in a newer term: the moment it won, as its status reports it
     *                           ({@link #tookOfficeMs}); the runner's own polling would add the latency of its status calls
     * @param firstAckMs         fault → the first increment acknowledged by a node other than the victim
     * @param catchUpMs          restart (resume, heal) → the victim applied everything committed when it came back
     *                           (corrupt-follower: restart → repaired, i.e. role follower again with everything committed applied;
     *                           disk-full: restart after the space was freed → caught up)
     * @param servingMs          restart → the restarted victim answers (JVM start, storage open, port bound)
     * @param stepDownMs         pause-leader: resume → the old leader no longer claims leadership;
     *                           isolate-leader: heal → the same;
     *                           disk-full: the leader's kill (the term change) → the full node stopped answering (role error or down)
     * @param victimAcksAfterLease pause-leader: increments the victim acknowledged after its lease had expired;
     *                           isolate-leader: increments invoked after its lease had expired that the victim acknowledged
     * @param failure            why the round failed (the fault was not handled as it must be), or empty
     * @param detail             what exactly the fault was (e.g. which bytes were flipped), or empty
     * @param ownStepDownMs      isolate-leader: the cut → the isolated leader stopped leading, from its own log (it
     *                           cannot be asked while cut off; the log's role watcher samples every 10 ms)
     */
    record Round(int number, String victim, String newLeader, long newTerm, double electionMs, double firstAckMs, double catchUpMs,
                 double servingMs, double stepDownMs, long victimAcksAfterLease, String failure, String detail, double ownStepDownMs) {
        Round(int number, String victim, String newLeader, long newTerm, double electionMs, double firstAckMs, double catchUpMs,
              double servingMs, double stepDownMs, long victimAcksAfterLease, String failure, String detail) {
            this(number, victim, newLeader, newTerm, electionMs, firstAckMs, catchUpMs, servingMs, stepDownMs, victimAcksAfterLease, failure, detail,
                    Double.NaN);
        }

        Round(int number, String victim, String newLeader, long newTerm, double electionMs, double firstAckMs, double catchUpMs,
              double servingMs, double stepDownMs, long victimAcksAfterLease) {
            this(number, victim, newLeader, newTerm, electionMs, firstAckMs, catchUpMs, servingMs, stepDownMs, victimAcksAfterLease, "", "");
        }
    }

    /** Most client operations kept for the linearizability check (about 300 bytes each while checking). */
    static final int MAX_HISTORY_OPS = 1_000_000;
    /** Wall-time budget of the final linearizability check; a partial report written on Ctrl-C gets a shorter one. */
    static final Duration CHECK_BUDGET = Duration.ofSeconds(120);
    static final Duration PARTIAL_CHECK_BUDGET = Duration.ofSeconds(10);

    private final Settings settings;
    private final ProgressLine progress;
    private final long startedNanos = System.nanoTime();
    private final ChaosRecorder recorder = new ChaosRecorder(startedNanos, MAX_HISTORY_OPS);
    private final List<Round> rounds = new CopyOnWriteArrayList<>();
    private final AtomicBoolean reported = new AtomicBoolean();
    private final Map<String, String> names = new LinkedHashMap<>();
    private volatile LocalCluster cluster;
    private volatile LoadGenerator load;
    private volatile ClusterWatch watch;
    private volatile TmpfsDisk disk;
    private volatile NetworkNamespaces network;
    private volatile LinkFaults linkFaults;
    private StorageFaultRounds storageRounds;

    ChaosRunner(Settings settings, ProgressLine progress) {
        this.settings = settings;
        this.progress = progress;
    }

    /**
     * Runs the experiment. Returns the complete report, or, when a step timed out or failed, a
     * report of what was measured until then, marked incomplete with the reason.
     */
    ChaosReport run() throws Exception {
        Path serversDir = settings.outDir().resolve("servers");
        deleteRecursively(serversDir);
        Files.createDirectories(serversDir);
        int et = settings.electionTimeoutMs();
        boolean steady = settings.mode() == Mode.NONE;
        double[] plan = new double[steady ? 3 : settings.rounds() + 2];
        plan[0] = 12;
        for (int i = 1; i < plan.length - 1; i++) {
            plan[i] = steady ? settings.durationSecs() : estimatedRoundSecs(et);
        }
        plan[plan.length - 1] = 6;
        progress.plan(plan);
        progress.label(settings.witness() ? "starting two data servers and a witness" : "starting three servers");
        int witnesses = settings.witness() ? 1 : 0;
        if (settings.inNamespaces()) {
            String what = settings.mode() == Mode.ISOLATE_LEADER ? "--mode isolate-leader" : "--link-loss/--link-delay";
            try {
                network = NetworkNamespaces.create(3);
            } catch (IOException e) {
                progress.finish();
                throw CliException.failed(what + " could not set up the servers' network namespaces: " + e.getMessage());
            }
            if (settings.links().any()) {
                try {
                    linkFaults = LinkFaults.apply(network, settings.links(), LocalCluster.networkEndpoints(network, 3));
                } catch (IOException | InterruptedException e) {
                    progress.finish();
                    network.close();
                    if (e instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                    }
                    throw CliException.failed("--link-loss/--link-delay could not be applied to the servers' links: " + e.getMessage());
                }
                LOG.info("links between servers: {}", settings.links().describe());
            }
        }
        try (LocalCluster c = network == null ? new LocalCluster(serversDir, 3, witnesses, et, settings.snapshotIntervalSecs())
                : new LocalCluster(serversDir, network, 3, witnesses, et, settings.snapshotIntervalSecs())) {
            cluster = c;
            for (int i = 0; i < c.endpoints().size(); i++) {
                names.put(c.endpoints().get(i), "n" + (i + 1));
            }
            if (settings.mode() == Mode.DISK_FULL) {
                // The last node's data lives on a small tmpfs from the start: that is the disk that fills up.
                disk = TmpfsDisk.mount(dataDir(c.endpoints().get(c.endpoints().size() - 1)), StorageFaultRounds.TMPFS_BYTES);
            }
            c.startAll();
            recorder.event(ChaosRecorder.EventKind.RECOVERY, "servers started");
            LocalCluster.NodeView first = c.awaitLeader(c.endpoints(), 0, 60_000);
            LOG.info("cluster up on {}, leader {} in term {}", c.endpoints(), first.endpoint(), first.term());
            watch = new ClusterWatch(c, names, recorder);
            long attemptTimeoutMs = Math.max(500, 2L * et);
            LoadGenerator l = new LoadGenerator(c.channels(), settings.concurrency(), 10_000, attemptTimeoutMs, false);
            l.logOperations(recorder);
            load = l;
            l.start();
            recorder.event(ChaosRecorder.EventKind.RECOVERY, "clients started");
            storageRounds = new StorageFaultRounds(c, l, recorder, this::name, this::dataDir,
                    e -> serversDir.resolve(dataDir(e).getFileName() + ".log"), et);
            try {
                awaitNewAck(l, 30_000);
                if (steady) {
                    progress.next("fault-free load for " + settings.durationSecs() + " s", null);
                    steady(c, l);
                } else {
                    for (int i = 1; i <= settings.rounds(); i++) {
                        progress.next("round " + i + "/" + settings.rounds(), i == 1 ? null : "round");
                        Round r = round(i, c, l);
                        rounds.add(r);
                        if (!r.failure().isEmpty() && (settings.mode() == Mode.CORRUPT_FOLLOWER || settings.mode() == Mode.DISK_FULL)) {
                            // The victim was left damaged (or full): the next round's "every node healthy" would never hold.
                            LOG.warn("round {} failed, no further rounds: {}", i, r.failure());
                            progress.skipNext(settings.rounds() - i);
                            break;
                        }
                        progress.detail(String.format(Locale.ROOT, "last: leader %s, first ack %s, caught up %s; acked %d",
                                ms(r.electionMs()), ms(r.firstAckMs()), ms(r.catchUpMs()), l.acked()));
                    }
                }
                progress.next("final checks: stopping the load, reading the counter, checking linearizability", steady ? null : "round");
            } finally {
                l.stop();
            }
            CounterClient reader = new CounterClient(c.channels(), 30_000, 2_000);
            CounterClient.Outcome value = reader.get();
            recorder.finalRead(value.ok() ? value.value() : null);
            watch.close();
            HistoryCheck.Verdict verdict = HistoryCheck.check(recorder.history().operations(), CHECK_BUDGET);
            ChaosReport report = report(value.ok() ? value.value() : null, value.ok() ? "" : value.line(), verdict, CHECK_BUDGET, null);
            reported.set(true);
            return report;
        } catch (Exception e) {
            String what = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            String reason = e instanceof TimeoutException ? "timed out: " + what : "failed: " + e.getClass().getSimpleName() + ": " + what;
            LOG.error("chaos run {} (server logs in {})", reason, serversDir);
            ChaosReport partial = partialReport(reason, CHECK_BUDGET);
            if (partial == null) {
                throw e;
            }
            return partial;
        } finally {
            progress.finish();
            TmpfsDisk d = disk;
            if (d != null) {
                d.close();
            }
            LinkFaults f = linkFaults;
            if (f != null) {
                f.close();
            }
            NetworkNamespaces n = network;
            if (n != null) {
                n.close();
            }
        }
    }

    /** A node's data directory (node1, node2, ... under the run's servers/ directory, in endpoint order). */
    Path dataDir(String endpoint) {
        return settings.outDir().resolve("servers").resolve("node" + (cluster.endpoints().indexOf(endpoint) + 1));
    }

    /**
     * The report of what was measured so far, marked incomplete with {@code reason}; null if a
     * report was already made (so a shutdown hook and the run never both write one).
     */
    ChaosReport partialReport(String reason, Duration checkBudget) {
        if (!reported.compareAndSet(false, true)) {
            return null;
        }
        LoadGenerator l = load;
        if (l != null) {
            l.logOperations(null);
        }
        HistoryCheck.Verdict verdict = HistoryCheck.check(recorder.history().operations(), checkBudget);
        return report(null, "the run was cut short", verdict, checkBudget, reason);
    }

    private ChaosReport report(Long finalValue, String readProblem, HistoryCheck.Verdict verdict, Duration budget, String incomplete) {
        LoadGenerator l = load;
        ClusterWatch w = watch;
        String bound = String.format(Locale.ROOT, "Checked: the whole history in one search (no windows: for this model the search is "
                + "about linear, roughly a second per few hundred thousand operations), bounded to the first %,d operations "
                + "(%,d later ones were not recorded) and a %d s budget (an exhausted budget gives UNKNOWN, which fails the run)",
                MAX_HISTORY_OPS, recorder.droppedFromHistory(), budget.toSeconds());
        return new ChaosReport(settings, new ChaosReport.Measured(List.copyOf(rounds), l == null ? 0 : l.acked(), l == null ? 0 : l.unknown(),
                l == null ? 0 : l.failed(), finalValue, readProblem, l == null ? List.of() : l.problems(), w == null ? 0 : w.elections(),
                w == null ? 0 : w.termChanges(), w == null ? 0 : w.maxTerm(), (System.nanoTime() - startedNanos) / 1e9,
                Map.copyOf(names), recorder.events(), recorder.buckets(), verdict, bound, incomplete, linkTotals()));
    }

    /** What the link fault did (nft counters, relay totals), or null without one or when its namespaces are already gone. */
    private LinkFaults.Totals linkTotals() {
        LinkFaults f = linkFaults;
        if (f == null) {
            return null;
        }
        try {
            return f.totals();
        } catch (IOException e) {
            LOG.warn("could not read the link fault's counters: {}", e.getMessage());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** A first guess of one round's length, replaced by the measured one after the first round. */
    private double estimatedRoundSecs(int et) {
        return switch (settings.mode()) {
            case PAUSE_LEADER, ISOLATE_LEADER -> 6 + 4.0 * et / 1000;
            case RESTART_ALL -> 10 + 2.0 * et / 1000;
            case CORRUPT_FOLLOWER, DISK_FULL -> 12 + 4.0 * et / 1000;
            default -> 5 + 2.0 * et / 1000;
        };
    }

    String name(String endpoint) {
        return names.getOrDefault(endpoint, endpoint);
    }

    private Round round(int number, LocalCluster cluster, LoadGenerator load) throws Exception {
        int et = settings.electionTimeoutMs();
        LocalCluster.NodeView leader = cluster.awaitLeader(cluster.endpoints(), 0, 30_000);
        // Every node healthy and the load flowing before the fault.
        for (String e : cluster.endpoints()) {
            cluster.awaitCaughtUp(e, leader.commit(), 30_000);
        }
        awaitNewAck(load, 30_000);
        // Then steady load for the settle time, so the fault hits a cluster that has been serving,
        // not one whose node restarted in the last round came back a moment ago (its JVM still
        // compiling). The experiment's spacing of faults, not a wait for a condition.
        TimeUnit.MILLISECONDS.sleep(settings.settleMs());
        List<String> all = cluster.endpoints();
        return switch (settings.mode()) {
            case KILL_LEADER -> killOne(number, cluster, load, leader, leader.endpoint());
            case KILL_FOLLOWER -> killOne(number, cluster, load, leader,
                    followerVictim(number, cluster.endpoints(), cluster.witnesses(), leader.endpoint()));
            case PAUSE_LEADER -> pauseLeader(number, cluster, load, leader, et);
            case ISOLATE_LEADER -> isolateLeader(number, cluster, load, leader, et);
            case RESTART_ALL -> restartAll(number, cluster, load, leader);
            case CORRUPT_FOLLOWER -> storageRounds.corruptFollower(number, leader);
            case DISK_FULL -> storageRounds.diskFull(number, leader, all.get(all.size() - 1), disk);
            case NONE -> throw new IllegalStateException("no rounds in mode none");
        };
    }

    /**
     * The follower a kill-follower round kills: the first that is not the leader; with a witness,
     * the data follower in odd rounds and the witness in even ones, so both losses are measured.
     */
    static String followerVictim(int round, List<String> endpoints, List<String> witnesses, String leader) {
        List<String> followers = endpoints.stream().filter(e -> !e.equals(leader)).toList();
        if (witnesses.isEmpty()) {
            return followers.get(0);
        }
        boolean witnessRound = round % 2 == 0;
        return followers.stream().filter(e -> witnesses.contains(e) == witnessRound).findFirst().orElse(followers.get(0));
    }

    private Round killOne(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader, String victim) throws Exception {
        boolean leaderDies = victim.equals(leader.endpoint());
        List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
        long t0 = System.nanoTime();
        long faultMicros = epochMicros(Instant.now());
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, leaderDies ? victim : null);
        cluster.server(victim).kill();
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "kill " + name(victim) + (leaderDies ? " (leader)" : " (follower)"));
        LocalCluster.NodeView newLeader;
        double electionMs = Double.NaN;
        if (leaderDies) {
            newLeader = cluster.awaitLeader(survivors, leader.term(), 30_000);
            double seenMs = millisSince(t0);
            electionMs = tookOfficeMs(faultMicros, newLeader, seenMs);
            LOG.info("round {}: {} won term {} {} ms after the kill by its own clock; the runner's poll saw it after {} ms", number,
                    newLeader.endpoint(), newLeader.term(), String.format(Locale.ROOT, "%.1f", electionMs), String.format(Locale.ROOT, "%.1f", seenMs));
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
        return new Round(number, name(victim), name(newLeader.endpoint()), newLeader.term(), electionMs, firstAckMs, restart[1], restart[0], Double.NaN, 0);
    }

    private Round pauseLeader(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader, int et) throws Exception {
        String victim = leader.endpoint();
        List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
        ServerProcess server = cluster.server(victim);
        long t0 = System.nanoTime();
        long faultMicros = epochMicros(Instant.now());
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, victim);
        // Anything the victim acknowledges after its lease (at most one election timeout) ran out is a violation.
        load.countAcksFrom(victim, t0 + TimeUnit.MILLISECONDS.toNanos(et));
        server.pause();
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "pause " + name(victim) + " (leader)");
        LocalCluster.NodeView newLeader = cluster.awaitLeader(survivors, leader.term(), 30_000);
        double electionMs = tookOfficeMs(faultMicros, newLeader, millisSince(t0));
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
        recorder.eventAt(resumed, ChaosRecorder.EventKind.RECOVERY, "resume " + name(victim));
        LocalCluster.await(victim + " stepping down", 30_000, () -> cluster.view(victim, 200)
                .map(v -> !v.leads() || v.term() > leader.term()).orElse(false));
        double stepDownMs = millisSince(resumed);
        cluster.awaitApplied(victim, target, 60_000);
        double catchUpMs = millisSince(resumed);
        recorder.event(ChaosRecorder.EventKind.RECOVERY, name(victim) + " caught up");
        long violations = load.acksFromWatched();
        load.countAcksFrom(null, 0);
        LOG.info("round {}: paused {}; new leader {} term {} after {} ms, first ack after {} ms; resumed: stepped down in {} ms, caught up in {} ms; {} acks after lease",
                number, victim, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, stepDownMs, catchUpMs, violations);
        return new Round(number, name(victim), name(newLeader.endpoint()), newLeader.term(), electionMs, firstAckMs, catchUpMs, Double.NaN, stepDownMs,
                violations);
    }

    /**
     * Cuts the leader off (its veth down: every packet dropped, no reset) for three election
     * timeouts, then heals. Measured: isolate → a survivor leads in a newer term; isolate → the
     * first acknowledgement from another node; heal → the old leader no longer claims leadership
     * in its term; heal → it applied everything committed at the heal. The old leader must not
     * acknowledge any increment invoked after its lease (0.9 election timeouts) ran out; such an
     * answer is counted until it is seen stepped down (see {@link LoadGenerator#countAcksInvokedAfter}).
     */
    private Round isolateLeader(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader, int et) throws Exception {
        String victim = leader.endpoint();
        int index = cluster.endpoints().indexOf(victim) + 1;
        List<String> survivors = cluster.endpoints().stream().filter(e -> !e.equals(victim)).toList();
        network.isolate(index);
        // From the moment the link is down for sure: the lease started before, at the last heartbeat the majority acknowledged.
        long t0 = System.nanoTime();
        Instant cutAt = Instant.now();
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, victim);
        load.countAcksInvokedAfter(victim, t0 + TimeUnit.MICROSECONDS.toNanos(900L * et));
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "isolate " + name(victim) + " (leader)");
        LocalCluster.NodeView newLeader = cluster.awaitLeader(survivors, leader.term(), 30_000);
        double electionMs = tookOfficeMs(epochMicros(cutAt), newLeader, millisSince(t0));
        long ack = watch.firstAckNanos.get(30, TimeUnit.SECONDS);
        double firstAckMs = (ack - t0) / 1e6;
        // The partition lasts three election timeouts: the fault itself, not a wait for a condition.
        long healAt = t0 + TimeUnit.MILLISECONDS.toNanos(3L * et);
        long left = healAt - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
        long target = cluster.view(newLeader.endpoint(), 1000).map(LocalCluster.NodeView::commit).orElse(newLeader.commit());
        network.heal(index);
        long healed = System.nanoTime();
        recorder.eventAt(healed, ChaosRecorder.EventKind.RECOVERY, "heal " + name(victim));
        LocalCluster.await(victim + " stepping down", 30_000, () -> cluster.view(victim, 200)
                .map(v -> !v.leads() || v.term() > leader.term()).orElse(false));
        double stepDownMs = millisSince(healed);
        long violations = load.acksFromWatched();
        load.countAcksFrom(null, 0);
        cluster.awaitApplied(victim, target, 60_000);
        double catchUpMs = millisSince(healed);
        recorder.event(ChaosRecorder.EventKind.RECOVERY, name(victim) + " caught up");
        Optional<Instant> stopped = RoleLog.stoppedLeading(cluster.server(victim).logFile(), leader.term(), cutAt);
        double ownStepDownMs = stopped.map(i -> Duration.between(cutAt, i).toNanos() / 1e6).orElse(Double.NaN);
        LOG.info("round {}: isolated {}; new leader {} term {} after {} ms, first ack after {} ms; it stopped leading {} ms after the cut "
                + "(its log); healed: stepped down in {} ms, caught up in {} ms; {} acks after lease", number, victim, newLeader.endpoint(),
                newLeader.term(), electionMs, firstAckMs, ownStepDownMs, stepDownMs, catchUpMs, violations);
        String detail = String.format(Locale.ROOT, "%s cut off for %.0f ms; %s; %s", name(victim), (healed - t0) / 1e6,
                stopped.isEmpty() ? "its log shows no step-down from term " + leader.term()
                        : String.format(Locale.ROOT, "it stopped leading %.0f ms after the cut (its log)", ownStepDownMs),
                violations == 0 ? "no acknowledgement from it of an increment invoked after its lease"
                        : violations + " acknowledgements from it of increments invoked after its lease");
        return new Round(number, name(victim), name(newLeader.endpoint()), newLeader.term(), electionMs, firstAckMs, catchUpMs, Double.NaN,
                stepDownMs, violations, "", detail, ownStepDownMs);
    }

    private Round restartAll(int number, LocalCluster cluster, LoadGenerator load, LocalCluster.NodeView leader) throws Exception {
        long t0 = System.nanoTime();
        long faultMicros = epochMicros(Instant.now());
        for (ServerProcess s : cluster.servers()) {
            s.kill();
        }
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "kill all");
        // Only acknowledgements after every server died count (answers already on their way do not).
        LoadGenerator.AckWatch watch = load.watchFirstAck(System.nanoTime(), null);
        long commitBefore = leader.commit();
        long restarted = System.nanoTime();
        cluster.startAll();
        recorder.eventAt(restarted, ChaosRecorder.EventKind.RECOVERY, "restart all");
        LocalCluster.NodeView newLeader = cluster.awaitLeader(cluster.endpoints(), leader.term(), 60_000);
        double electionMs = tookOfficeMs(faultMicros, newLeader, millisSince(t0));
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
        recorder.event(ChaosRecorder.EventKind.RECOVERY, "all caught up");
        LOG.info("round {}: restarted all; leader {} term {} after {} ms, first ack after {} ms, all caught up {} ms after restart",
                number, newLeader.endpoint(), newLeader.term(), electionMs, firstAckMs, catchUpMs);
        return new Round(number, "all", name(newLeader.endpoint()), newLeader.term(), electionMs, firstAckMs, catchUpMs, servingMs, Double.NaN, 0);
    }

    /**
     * Restarts {@code victim}; returns how long (from spawn) it took to answer, and to apply what the
     * leader had committed then.
     */
    private double[] restartAndCatchUp(LocalCluster cluster, String victim, String leader) throws Exception {
        long target = cluster.view(leader, 1000).map(LocalCluster.NodeView::commit).orElse(0L);
        ServerProcess s = cluster.server(victim);
        s.start();
        recorder.eventAt(s.startedNanos(), ChaosRecorder.EventKind.RECOVERY, "restart " + name(victim));
        cluster.awaitApplied(victim, 0, 60_000);
        double servingMs = millisSince(s.startedNanos());
        cluster.awaitCaughtUp(victim, target, 60_000);
        double caughtUp = millisSince(s.startedNanos());
        recorder.event(ChaosRecorder.EventKind.RECOVERY, name(victim) + " caught up");
        LOG.info("{} answered {} ms after it was spawned and caught up after {} ms", victim, servingMs, caughtUp);
        return new double[] {servingMs, caughtUp};
    }

    /** Load only, for {@code durationSecs}; the cluster watch counts any election. */
    private void steady(LocalCluster cluster, LoadGenerator load) throws InterruptedException, TimeoutException {
        cluster.awaitLeader(cluster.endpoints(), 0, 30_000);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.durationSecs());
        while (System.nanoTime() - end < 0) {
            ClusterWatch w = watch;
            progress.detail("elections " + (w == null ? 0 : w.elections()) + ", acked " + load.acked());
            TimeUnit.MILLISECONDS.sleep(200); // the run's length is the experiment, not a wait for a condition
        }
    }

    private static void awaitNewAck(LoadGenerator load, long timeoutMs) throws TimeoutException, InterruptedException {
        long before = load.acked();
        LocalCluster.await("an acknowledged increment", timeoutMs, () -> load.acked() > before);
    }

    /**
     * Fault → the new leader won, from the leader's own record of the moment ({@code status}'s
     * {@code role_since_unix_micros}; the servers run on this machine, so on this clock). The
     * runner learns of the win by polling every survivor's status, which adds that call's latency
     * (10-30 ms on a loaded machine); {@code seenMs}, the poll's figure, is used only when the
     * server does not say, and it bounds the answer (a leader's clock cannot put its win after it
     * was seen).
     */
    static double tookOfficeMs(long faultMicros, LocalCluster.NodeView newLeader, double seenMs) {
        if (newLeader.roleSinceMicros() <= 0) {
            return seenMs;
        }
        double recorded = (newLeader.roleSinceMicros() - faultMicros) / 1000.0;
        return Math.max(0, Math.min(recorded, seenMs));
    }

    static long epochMicros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
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
