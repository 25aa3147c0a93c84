package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The chaos rounds that break a follower's storage rather than its process (issue 18):
 * {@code corrupt-follower} damages a stopped follower's RocksDB files and measures how long the
 * restarted node takes to be repaired from the cluster; {@code disk-full} fills one follower's
 * tmpfs to the last byte under load, forces a term change and a snapshot on it, expects it to stop
 * answering, then frees the space and measures its rejoin. A round that does not see the expected
 * behaviour says what it saw instead and fails; nothing is assumed. Not thread-safe: driven by the
 * {@link ChaosRunner}'s thread.
 */
final class StorageFaultRounds {

    private static final Logger LOG = LoggerFactory.getLogger(StorageFaultRounds.class);
    /**
     * The full node's disk: the pre-sized 64 MiB WAL, RocksDB's preallocations (manifest, next WAL),
     * and room to flush a full 64 MiB memtable once the space is freed: a full node keeps serving
     * into its preallocated WAL, so at restart its replayed WAL becomes an SST file.
     */
    static final long TMPFS_BYTES = 256L << 20;

    private final LocalCluster cluster;
    private final LoadGenerator load;
    private final ChaosRecorder recorder;
    private final Function<String, String> names;
    private final Function<String, Path> dataDirs;
    private final Function<String, Path> logFiles;
    private final int electionTimeoutMs;

    StorageFaultRounds(LocalCluster cluster, LoadGenerator load, ChaosRecorder recorder, Function<String, String> names,
                       Function<String, Path> dataDirs, Function<String, Path> logFiles, int electionTimeoutMs) {
        this.cluster = cluster;
        this.load = load;
        this.recorder = recorder;
        this.names = names;
        this.dataDirs = dataDirs;
        this.logFiles = logFiles;
        this.electionTimeoutMs = electionTimeoutMs;
    }

    /** How long a damaged or filled node gets to be repaired or to rejoin. */
    long repairTimeoutMs() {
        return Math.max(30_000, 20L * electionTimeoutMs);
    }

    /**
     * Stops a follower, flips 64 bytes in its live WAL (odd rounds) or its largest SST (even
     * rounds), restarts it, and waits until its status shows it repaired: role follower again and
     * everything the leader had committed applied.
     */
    ChaosRunner.Round corruptFollower(int number, LocalCluster.NodeView leader) throws Exception {
        List<String> followers = cluster.endpoints().stream().filter(e -> !e.equals(leader.endpoint())).toList();
        String victim = followers.get(number % followers.size());
        String name = names.apply(victim);
        Path rocks = dataDirs.apply(victim).resolve("log");
        long t0 = System.nanoTime();
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, victim);
        cluster.server(victim).kill();
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "kill " + name + " (follower)");
        DiskFaults.Flip flip = null;
        String what = "WAL";
        if (number % 2 == 0) {
            Optional<DiskFaults.Flip> sst = DiskFaults.corruptLargestSst(rocks);
            if (sst.isPresent()) {
                flip = sst.get();
                what = "SST";
            } else {
                what = "WAL (no SST file yet)";
            }
        }
        if (flip == null) {
            flip = DiskFaults.corruptWal(rocks);
        }
        recorder.event(ChaosRecorder.EventKind.FAULT, "damage " + name + "'s " + what);
        LOG.info("round {}: {} damaged: {}", number, name, flip.describe());
        double firstAckMs = (awaitAck(watch, 30_000) - t0) / 1e6;
        long target = cluster.view(leader.endpoint(), 1000).map(LocalCluster.NodeView::commit).orElse(leader.commit());
        ServerProcess s = cluster.server(victim);
        s.start();
        recorder.eventAt(s.startedNanos(), ChaosRecorder.EventKind.RECOVERY, "restart " + name);
        Observed o = observe(victim, s, repairTimeoutMs(), v -> v.role().equals("follower") && v.applied() >= target && v.last() >= target);
        String failure = "";
        if (!o.reached()) {
            failure = String.format(Locale.ROOT, "%s (%s) not repaired within %d s: %s; the leader had committed %d before the restart; "
                    + "roles seen: %s", name, flip.describe(), repairTimeoutMs() / 1000, o.lastSeen(), target, o.roles());
        } else {
            recorder.event(ChaosRecorder.EventKind.RECOVERY, name + " repaired");
        }
        String reported = o.roles().contains("repairing") ? "status showed role repairing"
                : "status never showed role repairing (roles seen: " + o.roles() + ")";
        if (!o.roles().contains("repairing")) {
            LOG.warn("round {}: {} never showed role repairing after its {} was damaged", number, name, what);
        }
        LOG.info("round {}: {}", number, failure.isEmpty() ? name + " repaired after " + o.millis() + " ms" : failure);
        return new ChaosRunner.Round(number, name, names.apply(leader.endpoint()), leader.term(), Double.NaN, firstAckMs,
                o.reached() ? o.millis() : Double.NaN, o.servingMs(), Double.NaN, 0, failure, "damaged " + what + ": " + flip.describe() + "; " + reported);
    }

    /**
     * The follower on {@code disk} (whose endpoint is {@code fullNode}): its disk is filled to the
     * last byte, leadership moves between the two healthy nodes (a term change the full node must
     * persist), a snapshot is asked of the full node; it either stops answering (role error, or down) or, when every write it
     * makes fits in preallocated space (the term/vote slots, the write-ahead log), keeps serving; the others must serve
     * throughout; then the space is freed, it is restarted and must catch up.
     */
    ChaosRunner.Round diskFull(int number, LocalCluster.NodeView leaderBefore, String fullNode, TmpfsDisk disk) throws Exception {
        String full = names.apply(fullNode);
        LocalCluster.NodeView leader = leaderBefore;
        if (leader.endpoint().equals(fullNode)) {
            String other = cluster.endpoints().stream().filter(e -> !e.equals(fullNode)).findFirst().orElseThrow();
            String answer = admin("transfer-leader", other);
            LOG.info("round {}: {} led; moved leadership away: {}", number, full, answer);
            leader = cluster.awaitLeader(List.of(other), leader.term() - 1, 30_000);
        }
        Path log = logFiles.apply(fullNode);
        long logFrom = Files.size(log);
        long filler = disk.fill();
        recorder.event(ChaosRecorder.EventKind.FAULT, full + "'s disk full");
        LOG.info("round {}: {}'s disk filled: filler {} bytes, {} bytes free", number, full, filler, disk.freeBytes());
        // The term change is a leadership transfer between the two healthy nodes, not a kill: with
        // one node's disk full, killing the leader as well would be two faults out of three and
        // stall the cluster by design; the issue asks that it keeps serving throughout.
        String oldLeader = leader.endpoint();
        String successor = cluster.endpoints().stream().filter(e -> !e.equals(fullNode) && !e.equals(oldLeader)).findFirst().orElseThrow();
        long t0 = System.nanoTime();
        long faultMicros = ChaosRunner.epochMicros(java.time.Instant.now());
        LoadGenerator.AckWatch watch = load.watchFirstAck(t0, null);
        recorder.eventAt(t0, ChaosRecorder.EventKind.FAULT, "term change: leadership " + names.apply(oldLeader) + " -> " + names.apply(successor));
        String transfer = admin("transfer-leader", successor);
        LOG.info("round {}: transfer-leader {}: {}", number, names.apply(successor), transfer);
        String failure = "";
        double electionMs = Double.NaN;
        LocalCluster.NodeView newLeader = null;
        try {
            newLeader = cluster.awaitLeader(List.of(successor), leader.term(), 10_000);
            electionMs = ChaosRunner.tookOfficeMs(faultMicros, newLeader, (System.nanoTime() - t0) / 1e6);
        } catch (TimeoutException e) {
            LOG.info("round {}: {} did not take over within 10 s of the transfer: {}", number, names.apply(successor), transfer);
        }
        double firstAckMs = Double.NaN;
        String snapshot = "not asked";
        double stoppedMs = Double.NaN;
        String keptServing = "";
        try {
            if (newLeader == null) {
                newLeader = cluster.awaitLeader(cluster.endpoints(), leader.term(), 60_000);
            }
            firstAckMs = (awaitAck(watch, 60_000) - t0) / 1e6;
            long snapshotAt = System.nanoTime();
            snapshot = admin("snapshot", fullNode);
            recorder.eventAt(snapshotAt, ChaosRecorder.EventKind.FAULT, "snapshot on " + full);
            LOG.info("round {}: admin snapshot {}: {}", number, full, snapshot);
            long stopWaitMs = 15_000 + 5L * electionTimeoutMs;
            Observed stop = observe(fullNode, cluster.server(fullNode), stopWaitMs, v -> v.role().equals("error"));
            boolean stopped = stop.reached() || !cluster.server(fullNode).alive() || cluster.view(fullNode, 500).isEmpty();
            if (stopped) {
                stoppedMs = (System.nanoTime() - t0) / 1e6;
                recorder.event(ChaosRecorder.EventKind.FAULT, full + " stopped answering");
            } else {
                // Not a failure: the term/vote file and the write-ahead log are preallocated, so a
                // full disk fails only a write that needs new space (a snapshot, a flush). A node
                // whose writes all succeeded may keep serving; what must hold is that a failed
                // write stops it, which the snapshot's failure shows it did not hide (its log
                // lines are counted below), and the run's invariants (nothing lost or doubled).
                keptServing = String.format(Locale.ROOT, "; %s kept answering for %d s with a full disk (every write it made fit in "
                        + "preallocated space): %s", full, stopWaitMs / 1000, stop.lastSeen());
                LOG.info("round {}{}", number, keptServing);
            }
            // The others keep serving while the full node is out.
            long before = load.acked();
            LocalCluster.await("an acknowledged increment while " + full + "'s disk is full", 30_000, () -> load.acked() > before);
        } catch (TimeoutException e) {
            // The cluster stopped serving: that is the finding of this round, not a failure of the runner.
            failure = "the cluster stopped serving with " + full + "'s disk full: " + e.getMessage() + " (last seen of " + full + ": "
                    + cluster.view(fullNode, 500).map(LocalCluster.NodeView::toString).orElse("down") + ")";
            LOG.warn("round {}: {}", number, failure);
        }
        List<String> diskLines = linesAbout(log, logFrom, "No space left", "ENOSPC", "disk full", "out of space");
        disk.free();
        recorder.event(ChaosRecorder.EventKind.RECOVERY, "freed " + full + "'s disk");
        ServerProcess s = cluster.server(fullNode);
        s.kill();
        LocalCluster.NodeView leaderNow = newLeader != null ? newLeader
                : cluster.leaderAmong(cluster.endpoints(), 0).orElse(leader);
        long target = cluster.view(leaderNow.endpoint(), 1000).map(LocalCluster.NodeView::commit).orElse(leaderNow.commit());
        s.start();
        recorder.eventAt(s.startedNanos(), ChaosRecorder.EventKind.RECOVERY, "restart " + full);
        Observed rejoin = observe(fullNode, s, repairTimeoutMs(), v -> (v.role().equals("follower") || v.leads()) && v.applied() >= target);
        if (!rejoin.reached()) {
            failure = (failure.isEmpty() ? "" : failure + "; ") + String.format(Locale.ROOT, "%s did not rejoin within %d s after its disk was "
                    + "freed: %s; the leader had committed %d", full, repairTimeoutMs() / 1000, rejoin.lastSeen(), target);
        } else {
            recorder.event(ChaosRecorder.EventKind.RECOVERY, full + " caught up");
        }
        String detail = String.format(Locale.ROOT, "filler %,d bytes; admin snapshot: %s; %d log lines of %s about the full disk%s%s", filler,
                snapshot, diskLines.size(), full, diskLines.isEmpty() ? "" : " (first: " + cut(diskLines.get(0), 200) + ")", keptServing);
        LOG.info("round {}: {}", number, failure.isEmpty() ? detail : failure);
        return new ChaosRunner.Round(number, full, newLeader == null ? "none" : names.apply(newLeader.endpoint()),
                newLeader == null ? 0 : newLeader.term(), electionMs, firstAckMs,
                rejoin.reached() ? rejoin.millis() : Double.NaN, rejoin.servingMs(), stoppedMs, 0, failure, detail);
    }

    /** When the watched acknowledgement came (System.nanoTime), or a timeout that says what did not happen. */
    private static long awaitAck(LoadGenerator.AckWatch watch, long timeoutMs) throws TimeoutException, InterruptedException {
        try {
            return watch.firstAckNanos.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new TimeoutException("no increment acknowledged within " + timeoutMs / 1000 + " s of the fault");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** What the status poll saw of a node until a condition held or the time was up. */
    record Observed(boolean reached, double millis, double servingMs, Set<String> roles, String lastSeen) {
    }

    /** Polls {@code endpoint} every 20 ms for up to {@code timeoutMs}, from now, until {@code done} holds or its process exits. */
    private Observed observe(String endpoint, ServerProcess process, long timeoutMs, java.util.function.Predicate<LocalCluster.NodeView> done)
            throws InterruptedException {
        long start = System.nanoTime();
        long since = process.alive() ? Math.min(start, process.startedNanos()) : start;
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Set<String> roles = new LinkedHashSet<>();
        double servingMs = Double.NaN;
        String last = "never answered";
        while (System.nanoTime() - deadline < 0) {
            Optional<LocalCluster.NodeView> v = cluster.view(endpoint, 200);
            if (v.isPresent()) {
                if (Double.isNaN(servingMs)) {
                    servingMs = (System.nanoTime() - since) / 1e6;
                }
                roles.add(v.get().role());
                last = String.format(Locale.ROOT, "role %s, term %d, last index %d, applied %d", v.get().role(), v.get().term(), v.get().last(),
                        v.get().applied());
                if (done.test(v.get())) {
                    return new Observed(true, (System.nanoTime() - since) / 1e6, servingMs, roles, last);
                }
            } else if (!process.alive()) {
                return new Observed(false, Double.NaN, servingMs, roles, "its process exited; last log line: " + lastLine(logFiles.apply(endpoint)));
            }
            TimeUnit.MILLISECONDS.sleep(ClusterWatch.PERIOD_MS);
        }
        return new Observed(false, Double.NaN, servingMs, roles, "last seen " + last);
    }

    /** Runs {@code admin OP TARGET} of this jar in-process; returns its one-line answer. */
    private String admin(String op, String target) {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new AdminCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(out, true));
        cli.setExecutionExceptionHandler((ex, cmd, parse) -> {
            out.write(ex.getMessage() == null ? ex.toString() : ex.getMessage());
            return 1;
        });
        int rc = cli.execute("--peers", String.join(",", cluster.endpoints()), "--timeout-ms", "10000", op, target);
        String text = out.toString().trim().replace('\n', ' ');
        return rc == 0 ? "ok: " + text : "exit " + rc + ": " + text;
    }

    /** Lines of {@code log} from byte {@code from} on that mention any of {@code needles} (case-insensitive). */
    static List<String> linesAbout(Path log, long from, String... needles) throws IOException {
        List<String> out = new ArrayList<>();
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long n = Math.max(0, f.length() - from);
            byte[] b = new byte[(int) Math.min(n, 64L << 20)];
            f.seek(from);
            f.readFully(b);
            for (String line : new String(b, StandardCharsets.UTF_8).split("\n")) {
                String l = line.toLowerCase(Locale.ROOT);
                for (String needle : needles) {
                    if (l.contains(needle.toLowerCase(Locale.ROOT))) {
                        out.add(line.trim());
                        break;
                    }
                }
            }
        }
        return out;
    }

    private static String lastLine(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (!lines.get(i).isBlank() && !lines.get(i).startsWith("\tat ")) {
                    return cut(lines.get(i).trim(), 300);
                }
            }
            return "(empty)";
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private static String cut(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "…";
    }
}
