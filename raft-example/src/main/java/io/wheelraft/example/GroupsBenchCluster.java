package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import io.wheelraft.proto.GroupsSummaryResponse;
import io.wheelraft.proto.LedGroupsResponse;
import io.wheelraft.rpc.AdminClient;
import io.wheelraft.rpc.RpcOptions;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The three {@code server --groups N} processes of one {@code groups-bench} group count, each
 * hosting one replica of every group, with an admin client per process. Started by
 * {@link #start}; {@link #close()} kills whatever still runs and deletes the data (keeping the
 * logs when a server died on its own, for the reader).
 *
 * <p>Not thread-safe: driven by the benchmark's one thread.
 */
final class GroupsBenchCluster implements AutoCloseable {

    /** Deadline of one admin call: generous, a process hosting 100,000 groups may be busy. */
    private static final long ADMIN_TIMEOUT_MS = 5_000;
    /** The shortest and the longest pause between two polls for leaders ({@link #leaderPollMs}). */
    private static final long MIN_LEADER_POLL_MS = 100;
    private static final long MAX_LEADER_POLL_MS = 1_000;

    /** How waiting for leaders ended: times since the start, -1 when it never happened. */
    record LeaderWait(long allHostedMs, long allLedMs, int leaders) {
        boolean converged() {
            return allLedMs >= 0;
        }
    }

    private final int groups;
    private final Path work;
    private final List<String> endpoints;
    private final List<Integer> metricsPorts;
    private final List<Process> servers = new ArrayList<>();
    private final List<AdminClient> admins = new ArrayList<>();
    private final boolean[] killed = new boolean[3];
    private final long startedNanos;
    /** How the servers are started, again on a restart. */
    private final ServerJvm jvm;
    private final int electionTimeoutMs;
    private boolean keepLogs;

    private GroupsBenchCluster(int groups, Path work, List<Integer> ports, ServerJvm jvm, int electionTimeoutMs) {
        this.groups = groups;
        this.work = work;
        this.jvm = jvm;
        this.electionTimeoutMs = electionTimeoutMs;
        this.endpoints = List.of("127.0.0.1:" + ports.get(0), "127.0.0.1:" + ports.get(1), "127.0.0.1:" + ports.get(2));
        this.metricsPorts = ports.subList(3, 6);
        this.startedNanos = System.nanoTime();
    }

    /** Starts three servers hosting groups {@code 0..groups-1} under {@code work} (emptied first). */
    static GroupsBenchCluster start(Path work, int groups, ServerJvm jvm, int electionTimeoutMs) throws IOException, InterruptedException {
        ChaosRunner.deleteRecursively(work);
        Files.createDirectories(work);
        GroupsBenchCluster c = new GroupsBenchCluster(groups, work, LocalCluster.freePorts(6), jvm, electionTimeoutMs);
        try {
            for (int i = 0; i < 3; i++) {
                c.servers.add(c.spawn(i));
                c.admins.add(new AdminClient(c.endpoints.get(i), RpcOptions.defaults()));
            }
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    int groups() {
        return groups;
    }

    List<String> endpoints() {
        return endpoints;
    }

    long pid(int i) {
        return servers.get(i).pid();
    }

    int metricsPort(int i) {
        return metricsPorts.get(i);
    }

    boolean killed(int i) {
        return killed[i];
    }

    /** {@code AdminService.GroupsSummary} of process {@code i}; throws {@link StatusRuntimeException} if it does not answer in time. */
    GroupsSummaryResponse summary(int i) {
        try {
            return admins.get(i).groupsSummary(ADMIN_TIMEOUT_MS);
        } catch (StatusRuntimeException e) {
            admins.get(i).reconnectNow(); // a starting process listens soon: don't wait out gRPC's backoff
            throw e;
        }
    }

    /** {@code AdminService.LedGroups} of process {@code i}, answering within {@code timeoutMs}. */
    LedGroupsResponse ledGroups(int i, long timeoutMs) {
        return ledGroups(i, timeoutMs, false);
    }

    /** As {@link #ledGroups(int, long)}; {@code withSince}: also since when each group has been led there. */
    LedGroupsResponse ledGroups(int i, long timeoutMs, boolean withSince) {
        try {
            return admins.get(i).ledGroups(timeoutMs, withSince);
        } catch (StatusRuntimeException e) {
            admins.get(i).reconnectNow();
            throw e;
        }
    }

    /** The leaders counted over the processes still running (one that does not answer counts none). */
    int leaders() {
        return totals().leaders();
    }

    /**
     * How long to wait before the next poll for leaders, {@code elapsedMs} after the start: a
     * hundredth of the time so far, between {@value #MIN_LEADER_POLL_MS} ms and
     * {@value #MAX_LEADER_POLL_MS} ms. Each poll ({@code AdminService.GroupsSummary}) visits every
     * replica of every process, and the start it times is bound by the same CPU: at 100,000
     * groups a poll every 100 ms took 8 % of the servers' Raft and transport threads' samples.
     * Pausing in proportion to the time so far keeps the error of "all led" within about 1 %
     * (at most 100 ms for a start under 10 s) and the poll's share small.
     */
    static long leaderPollMs(long elapsedMs) {
        return Math.max(MIN_LEADER_POLL_MS, Math.min(MAX_LEADER_POLL_MS, elapsedMs / 100));
    }

    /**
     * Polls until every process hosts all groups and every group has a leader ({@link #leaderPollMs}), or
     * {@code timeoutSecs} after the start (then it says so on standard error and returns a
     * {@link LeaderWait} with {@code allLedMs} -1).
     *
     * @throws CliException if a server exits meanwhile
     */
    LeaderWait awaitLeaders(int timeoutSecs) throws InterruptedException {
        long hostedAt = 0;
        long deadline = startedNanos + TimeUnit.SECONDS.toNanos(timeoutSecs);
        while (true) {
            Totals t = totals();
            int hosted = t.hosted();
            int leaders = t.leaders();
            if (hostedAt == 0 && hosted == 3 * groups) {
                hostedAt = System.nanoTime();
            }
            if (hosted == 3 * groups && leaders == groups) {
                return new LeaderWait(sinceStartMs(hostedAt), sinceStartMs(System.nanoTime()), leaders);
            }
            checkAlive();
            if (System.nanoTime() - deadline > 0) {
                // Not every group holds a leader (elections keep failing): measured all the same, and reported so.
                System.err.println(Main.NAME + ": only " + leaders + " of " + groups + " groups had a leader after " + timeoutSecs
                        + " s; measuring anyway");
                return new LeaderWait(hostedAt == 0 ? -1 : sinceStartMs(hostedAt), -1, leaders);
            }
            TimeUnit.MILLISECONDS.sleep(leaderPollMs(sinceStartMs(System.nanoTime())));
        }
    }

    /** Replicas hosted, leaders and quiet replicas summed over the running processes that answer. */
    private record Totals(int hosted, int leaders, int quiet) {
    }

    private Totals totals() {
        int hosted = 0;
        int leaders = 0;
        int quiet = 0;
        for (int i = 0; i < 3; i++) {
            if (killed[i]) {
                continue;
            }
            try {
                GroupsSummaryResponse s = summary(i);
                hosted += s.getGroups();
                leaders += s.getLeaders();
                quiet += s.getQuiet();
            } catch (StatusRuntimeException notYet) {
                // still starting, or too busy to answer: counts none
            }
        }
        return new Totals(hosted, leaders, quiet);
    }

    private long sinceStartMs(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos - startedNanos);
    }

    /** @throws CliException naming the server that exited without being killed by the benchmark */
    void checkAlive() {
        for (int i = 0; i < 3; i++) {
            Process p = servers.get(i);
            if (!killed[i] && !p.isAlive()) {
                keepLogs = true;
                throw CliException.failed("server " + (i + 1) + " of the " + groups + "-group run exited with " + p.exitValue() + "; see " + work);
            }
        }
    }

    /** Keeps the servers' logs in the work directory when the cluster closes (a result worth a look). */
    void keepLogs() {
        keepLogs = true;
    }

    /** Where the servers' logs are ({@code nI.log}). */
    Path work() {
        return work;
    }

    /**
     * {@code kill -9} of process {@code i} (SIGKILL: no shutdown hook, no flush). The future
     * completes when the process has exited (its sockets closed): with a thread in the kernel
     * (an fsync) that can be well after the signal, and until then its peers see no break.
     */
    java.util.concurrent.CompletableFuture<Long> kill(int i) {
        killed[i] = true;
        Process p = servers.get(i);
        java.util.concurrent.CompletableFuture<Long> exited = p.onExit().thenApply(x -> System.nanoTime());
        p.destroyForcibly();
        return exited;
    }

    /** Starts killed process {@code i} again on its data, ports and options (a new JVM: nothing of the old one is warm). */
    void restart(int i) throws IOException {
        if (!killed[i]) {
            throw new IllegalStateException("process " + (i + 1) + " was not killed");
        }
        servers.set(i, spawn(i));
        killed[i] = false;
        admins.get(i).reconnectNow();
    }

    /**
     * Polls every 100 ms until every process hosts all groups, every group has a leader and every
     * replica is quiet but at most {@code mayStayAwake} (those of groups still written to); returns
     * how long that took in milliseconds, or -1 if it has not happened within {@code timeoutMs}.
     */
    long awaitSettled(long timeoutMs, int mayStayAwake) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() - deadline < 0) {
            Totals t = totals();
            if (t.hosted() == 3 * groups && t.leaders() == groups && t.quiet() >= 3 * groups - mayStayAwake) {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            checkAlive();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return -1;
    }

    /** {@code java JVM-OPTIONS -cp CP Main server --groups N ...}, logging to {@code work/nI.log}. */
    private Process spawn(int i) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvm.options());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "server",
                "--data", work.resolve("n" + i).toString(), "--self", endpoints.get(i), "--peers", String.join(",", endpoints),
                "--groups", Integer.toString(groups), "--election-timeout-ms", Integer.toString(electionTimeoutMs),
                "--metrics-port", Integer.toString(metricsPorts.get(i))));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("n" + i + ".log").toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        ChildProcesses.track(p);
        return p;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        admins.forEach(AdminClient::close);
        for (Process p : servers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        if (keepLogs) {
            for (int i = 0; i < 3; i++) {
                ChaosRunner.deleteRecursively(work.resolve("n" + i)); // the data; the logs stay for the reader
            }
        } else {
            ChaosRunner.deleteRecursively(work);
        }
    }
}
