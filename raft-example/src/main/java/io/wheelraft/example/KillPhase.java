package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import io.wheelraft.proto.LedGroupsResponse;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kill phase of {@code groups-bench}, run last: {@code kill -9} of the process leading the most
 * groups while increments go to a sample of groups. Measures, for every group the victim led just
 * before, the time from the kill until a survivor leads it ({@code AdminService.LedGroups} polled
 * on both survivors every {@code pollMs}), and checks afterwards that every acknowledged increment
 * is in its group's counter ({@link LostWrites}). Every step is bounded: the polls by
 * {@code timeoutSecs}, each increment and read by the client timeout. Stateless.
 */
final class KillPhase {

    /** How long one increment or read may retry before it counts as unknown (or unread). */
    private static final long TIMEOUT_MS = 10_000;
    /** Deadline of one poll: a survivor busy electing 30,000 leaders may answer slowly. */
    private static final long POLL_TIMEOUT_MS = 2_000;

    private KillPhase() {
    }

    /**
     * {@code rounds} kills in a row under one stream of writes, all of the process leading the most
     * groups at the first: after each but the last it is started again and the cluster left to
     * settle (every group led, every replica of a group not written to quiet, at most {@code settleSecs}; by then the restarted
     * process leads again the groups that prefer it) before it is killed again. The survivors of the
     * last round have been through the earlier ones. The result is the last round's,
     * with the earlier rounds' figures in {@link GroupsBenchReport.Kill#earlierRounds()}; the
     * writes are checked once, at the end, over all rounds.
     */
    static GroupsBenchReport.Kill run(GroupsBenchCluster cluster, int[] sample, int concurrency, int writeBeforeSecs, int writeAfterSecs,
                                      long pollMs, int timeoutSecs, int rounds, int settleSecs) throws InterruptedException, java.io.IOException {
        List<String> ids = GroupSample.ids(sample);
        try (ClusterChannels channels = new ClusterChannels(cluster.endpoints())) {
            long[] before = LostWrites.read(channels, ids, TIMEOUT_MS);
            TrackedWrites writes = new TrackedWrites(channels, ids, concurrency, TIMEOUT_MS);
            writes.start();
            FailoverTimes times = null;
            int victim = -1;
            List<String> earlier = new java.util.ArrayList<>();
            boolean stoppedCleanly;
            try {
                TimeUnit.SECONDS.sleep(writeBeforeSecs);
                cluster.checkAlive();
                // The same process every round: the survivors of the last have been through the earlier ones.
                victim = busiestLeader(cluster);
                for (int round = 1; round <= rounds; round++) {
                    if (round > 1) {
                        String previous = describe(round - 1, times);
                        System.err.println(Main.NAME + ": kill " + previous + "; restarting process " + (victim + 1));
                        earlier.add(previous + ", then " + restartAndSettle(cluster, victim, settleSecs, 3 * sample.length));
                        cluster.checkAlive();
                    }
                    times = killAndWait(cluster, victim, pollMs, timeoutSecs);
                }
                TimeUnit.SECONDS.sleep(writeAfterSecs); // writes go on against the new leaders
            } finally {
                stoppedCleanly = writes.stop();
            }
            if (!stoppedCleanly) {
                System.err.println(Main.NAME + ": some increments had not ended " + (TIMEOUT_MS + 5_000) + " ms after the writes stopped; "
                        + "their groups may show more than counted");
            }
            long[] after = LostWrites.read(channels, ids, TIMEOUT_MS);
            LostWrites.Verdict verdict = LostWrites.check(before, after, writes.acked(), writes.unknown(), writes.failed());
            return new GroupsBenchReport.Kill(victim, times.victimGroups(), times.sortedElectedMillis(), times.sortedSeenMillis(), times.unresolved(),
                    TimeUnit.SECONDS.toMillis(timeoutSecs), pollMs, verdict, List.copyOf(earlier));
        }
    }

    /** Kills {@code victim} and polls the survivors until they lead every group it led, or the limit. */
    private static FailoverTimes killAndWait(GroupsBenchCluster cluster, int victim, long pollMs, int timeoutSecs) throws InterruptedException {
        int[] led = cluster.ledGroups(victim, POLL_TIMEOUT_MS).getNumberedList().stream().mapToInt(Integer::intValue).toArray();
        long killEpochMs = System.currentTimeMillis();
        long killNanos = System.nanoTime();
        java.util.concurrent.CompletableFuture<Long> exited = cluster.kill(victim);
        FailoverTimes times = new FailoverTimes(led, killNanos, killEpochMs);
        pollSurvivors(cluster, victim, times, pollMs, killNanos + TimeUnit.SECONDS.toNanos(timeoutSecs));
        Long exitNanos = exited.getNow(null);
        System.err.println(Main.NAME + ": the killed server " + (exitNanos == null ? "had not exited yet"
                : "exited " + TimeUnit.NANOSECONDS.toMillis(exitNanos - killNanos) + " ms after the signal"));
        return times;
    }

    /**
     * Starts the killed {@code victim} again and waits (at most {@code settleSecs}) for every group
     * to be led and every replica quiet but {@code mayStayAwake}; says which, for the round's line.
     */
    private static String restartAndSettle(GroupsBenchCluster cluster, int victim, int settleSecs, int mayStayAwake)
            throws InterruptedException, java.io.IOException {
        cluster.restart(victim);
        long settledMs = cluster.awaitSettled(TimeUnit.SECONDS.toMillis(settleSecs), mayStayAwake);
        if (settledMs < 0) {
            System.err.println(Main.NAME + ": the cluster had not settled " + settleSecs
                    + " s after the restart (every group led, every replica of an unwritten group quiet); killing again all the same");
            return "not settled " + settleSecs + " s after the restart";
        }
        System.err.println(Main.NAME + ": settled " + settledMs + " ms after the restart");
        return "settled " + settledMs + " ms after the restart";
    }

    /** One earlier round in a line: who was killed, how many of its groups were led again within the target, p50 / p99 / max. */
    static String describe(int round, FailoverTimes t) {
        long[] ms = t.sortedElectedMillis();
        return String.format(java.util.Locale.ROOT, "round %d: %d of %d within %d s, p50/p99/max %s/%s/%s ms", round,
                FailoverTimes.countWithin(ms, GroupsBenchReport.FAILOVER_TARGET_MS), t.victimGroups(),
                GroupsBenchReport.FAILOVER_TARGET_MS / 1000, pct(ms, t.unresolved(), 0.50), pct(ms, t.unresolved(), 0.99), pct(ms, t.unresolved(), 1.0));
    }

    private static String pct(long[] ms, int unresolved, double q) {
        long v = FailoverTimes.percentile(ms, unresolved, q);
        return v < 0 ? "unresolved" : Long.toString(v);
    }

    /** The process that leads the most groups now (the first of equals); a process that does not answer leads none. */
    private static int busiestLeader(GroupsBenchCluster cluster) {
        int best = 0;
        int bestCount = -1;
        for (int i = 0; i < 3; i++) {
            try {
                LedGroupsResponse led = cluster.ledGroups(i, POLL_TIMEOUT_MS);
                if (led.getNumberedCount() > bestCount) {
                    best = i;
                    bestCount = led.getNumberedCount();
                }
            } catch (StatusRuntimeException e) {
                // leads none as far as we know
            }
        }
        return best;
    }

    /** Polls both survivors every {@code pollMs} until they lead all the victim's groups or the deadline. */
    private static void pollSurvivors(GroupsBenchCluster cluster, int victim, FailoverTimes times, long pollMs, long deadline)
            throws InterruptedException {
        long next = System.nanoTime();
        while (!times.allLed() && System.nanoTime() - deadline < 0) {
            for (int i = 0; i < 3; i++) {
                if (i == victim) {
                    continue;
                }
                try {
                    LedGroupsResponse led = cluster.ledGroups(i, POLL_TIMEOUT_MS, true);
                    times.observe(led.getNumberedList(), led.getNumberedSinceMsList(), System.nanoTime());
                } catch (StatusRuntimeException e) {
                    // busy or briefly unreachable: the next poll asks again
                }
            }
            cluster.checkAlive();
            next += TimeUnit.MILLISECONDS.toNanos(pollMs);
            long wait = next - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            } else {
                next = System.nanoTime(); // a slow poll: no burst to catch up
            }
        }
    }
}
