package io.wheelraft.core.sim;

import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover figures from the simulation (virtual time, so the bounds below are deterministic
 * properties of the seeds, not wall-clock timings). For each configuration a number of seeded
 * clusters each go through several rounds of: stable leader under light client load, crash the
 * leader (killed: its connections break; or hung: it goes silent), measure virtual ms to the next
 * leader, restart the old leader and let it rejoin. Split votes (two or more nodes campaigning in
 * one term) are counted by polling every node's role after every simulated millisecond.
 *
 * <p>Targets: killed leader replaced within 0.4 x electionTimeoutMs in the median (at T = 1000:
 * 0.1T median and 0.15T p90), with no split vote; silent leader replaced within 2 x
 * electionTimeoutMs in at least 99% of crashes (at T = 1000: 1.1T median); no livelock in any seed; no
 * election while nothing fails (including when the old leader rejoins). The silent-leader time is
 * measured from the crash, which is at most one heartbeat interval after the leader's last
 * heartbeat, so the figure from the last heartbeat is up to T/10 larger; the summary also reports
 * the share within 2T - T/10 of the crash, which bounds the time from the last heartbeat.
 *
 * <p>{@code -Dwheelraft.sim.seed=S} replays one seed of every configuration;
 * {@code -Dwheelraft.failover.seeds=N} sets clusters per configuration (default 30, 10 crashes each).
 */
class FailoverSimulationTest {

    private static final int CRASHES_PER_SEED = 10;
    private static final int LIVELOCK_LIMIT_TIMEOUTS = 20;

    /** One measured failover. */
    record Failover(long seed, int round, long ms, long lastingMs, boolean splitVote, int extraElections) {
    }

    /** Everything measured for one configuration. */
    record Figures(String name, int electionTimeoutMs, List<Failover> failovers) {
        long[] sorted() {
            return failovers.stream().mapToLong(Failover::ms).sorted().toArray();
        }

        long percentile(double p) {
            long[] s = sorted();
            int idx = (int) Math.ceil(p / 100.0 * s.length) - 1;
            return s[Math.max(0, Math.min(s.length - 1, idx))];
        }

        long median() {
            return percentile(50);
        }

        double shareWithin(long ms) {
            return failovers.stream().filter(f -> f.ms() <= ms).count() / (double) failovers.size();
        }

        long lastingPercentile(double p) {
            long[] s = failovers.stream().mapToLong(Failover::lastingMs).sorted().toArray();
            int idx = (int) Math.ceil(p / 100.0 * s.length) - 1;
            return s[Math.max(0, Math.min(s.length - 1, idx))];
        }

        double disruptedRate() {
            return failovers.stream().filter(f -> f.extraElections() > 0).count() / (double) failovers.size();
        }

        double splitVoteRate() {
            return failovers.stream().filter(Failover::splitVote).count() / (double) failovers.size();
        }

        String summary() {
            int t = electionTimeoutMs;
            return String.format(Locale.ROOT,
                    "%-28s n=%d  median=%d (%.2fT)  p90=%d  p99=%d (%.2fT)  max=%d (%.2fT)  <=2T:%.1f%%  <=1.9T:%.1f%%  split votes=%.1f%%"
                            + "  | new leader deposed again: %.1f%%, lasting leader median=%d p99=%d max=%d",
                    name, failovers.size(), median(), median() / (double) t, percentile(90), percentile(99), percentile(99) / (double) t,
                    percentile(100), percentile(100) / (double) t, 100 * shareWithin(2L * t), 100 * shareWithin(2L * t - t / 10),
                    100 * splitVoteRate(), 100 * disruptedRate(), lastingPercentile(50), lastingPercentile(99), lastingPercentile(100));
        }
    }

    private static List<Long> seeds() {
        String one = System.getProperty("wheelraft.sim.seed");
        if (one != null) {
            return List.of(Long.parseLong(one));
        }
        int n = Integer.getInteger("wheelraft.failover.seeds", 30);
        List<Long> out = new ArrayList<>();
        for (long s = 1; s <= n; s++) {
            out.add(s);
        }
        return out;
    }

    static Figures measure(int size, int electionTimeoutMs, boolean killed) {
        String name = size + " nodes, T=" + electionTimeoutMs + ", " + (killed ? "killed" : "hung");
        List<Failover> all = new ArrayList<>();
        for (long seed : seeds()) {
            all.addAll(runSeed(seed, size, electionTimeoutMs, killed));
        }
        Figures f = new Figures(name, electionTimeoutMs, all);
        System.out.println("[failover] " + f.summary());
        all.stream().filter(x -> x.ms() > 2L * electionTimeoutMs || x.splitVote()).limit(5)
                .forEach(x -> System.out.println("[failover]   slow or split: seed " + x.seed() + " round " + x.round() + ": " + x.ms() + " ms, split vote " + x.splitVote()));
        return f;
    }

    /** One cluster: CRASHES_PER_SEED rounds of stable leader, crash, failover, rejoin. */
    static List<Failover> runSeed(long seed, int size, int t, boolean killed) {
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, size, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(t));
        CounterWorkload load = new CounterWorkload(c, 2, 4 * t);
        long limit = (long) LIVELOCK_LIMIT_TIMEOUTS * t;
        assertTrue(runWithLoad(c, load, () -> c.leaderIndex() >= 0, limit), "no first leader; " + c.replayHint());
        List<Failover> out = new ArrayList<>();
        for (int round = 0; round < CRASHES_PER_SEED; round++) {
            // Stable phase: a random wait so the crash falls anywhere in the heartbeat cycle.
            int electionsBefore = c.leaderTerms();
            int leader = c.leaderIndex();
            runWithLoad(c, load, () -> false, t / 5 + c.random().nextInt(t / 2));
            assertEquals(electionsBefore, c.leaderTerms(), "an election without any fault (round " + round + "); " + c.replayHint());
            assertEquals(leader, c.leaderIndex(), "leadership moved without any fault; " + c.replayHint());

            long crashedAt = c.nowMs();
            c.crash(leader, killed);
            Map<Long, Set<Integer>> candidatesByTerm = new HashMap<>();
            boolean elected = runWithLoad(c, load, () -> {
                recordCandidates(c, candidatesByTerm);
                return c.leaderIndex() >= 0;
            }, limit);
            assertTrue(elected, "livelock: no leader " + limit + " ms after crashing " + c.peer(leader) + " (round " + round + "); "
                    + c.replayHint());
            boolean split = candidatesByTerm.values().stream().anyMatch(v -> v.size() > 1);
            long firstLeaderMs = c.nowMs() - crashedAt;

            // The old leader restarts and rejoins. Any further election before the cluster settles
            // means the first new leader did not last; the time to the lasting leader is kept too.
            int terms = c.leaderTerms();
            long[] lastLeaderChange = {c.nowMs()};
            int[] seenTerms = {terms};
            c.restart(leader);
            long target = c.node(c.leaderIndex()).status().commitIndex();
            assertTrue(runWithLoad(c, load, () -> {
                if (c.leaderTerms() > seenTerms[0]) {
                    seenTerms[0] = c.leaderTerms();
                    lastLeaderChange[0] = c.nowMs();
                }
                return c.leaderIndex() >= 0 && ((CounterFsm) c.stateMachine(leader)).lastAppliedIndex() >= target
                        && c.nowMs() - lastLeaderChange[0] >= t;
            }, limit), "no settled leader with the restarted node caught up; " + c.replayHint());
            int extra = c.leaderTerms() - terms;
            long lastingMs = lastLeaderChange[0] - crashedAt;
            out.add(new Failover(seed, round, firstLeaderMs, lastingMs, split, extra));
        }
        return out;
    }

    private static void recordCandidates(SimCluster c, Map<Long, Set<Integer>> candidatesByTerm) {
        for (int i = 0; i < c.size(); i++) {
            if (c.isUp(i)) {
                var s = c.node(i).status();
                if (s.role() == Role.CANDIDATE) {
                    candidatesByTerm.computeIfAbsent(s.term(), k -> new HashSet<>()).add(i);
                }
            }
        }
    }

    private static boolean runWithLoad(SimCluster c, CounterWorkload load, java.util.function.BooleanSupplier done, long maxMs) {
        return c.runUntil(() -> {
            if (done.getAsBoolean()) {
                return true;
            }
            load.tick();
            return false;
        }, maxMs);
    }

    // ------------------------------------------------------------ the targets

    private static final int[] TIMEOUTS = {1000, 150};
    private static final int[] SIZES = {3, 5};

    @Test
    void killedLeaderIsReplacedWithinFourTenthsOfTheElectionTimeoutInTheMedian() {
        List<String> missed = new ArrayList<>();
        for (int t : TIMEOUTS) {
            for (int size : SIZES) {
                Figures f = measure(size, t, true);
                if (f.median() > 0.4 * t) {
                    missed.add("median failover after a kill " + f.median() + " ms > 0.4 x " + t + ": " + f.summary());
                }
                // Issue #23's targets, at the timeout they are stated for: 0.1T median, 0.15T p90.
                if (t == 1000 && (f.median() > 0.1 * t || f.percentile(90) > 0.15 * t)) {
                    missed.add("failover after a kill above 0.1T median / 0.15T p90: " + f.summary());
                }
                if (f.splitVoteRate() > 0) {
                    missed.add("split votes after a kill: " + f.summary());
                }
            }
        }
        assertTrue(missed.isEmpty(), String.join("\n", missed));
    }

    @Test
    void silentLeaderIsReplacedWithinTwoElectionTimeoutsInNinetyNinePercentOfCrashes() {
        List<String> missed = new ArrayList<>();
        for (int t : TIMEOUTS) {
            for (int size : SIZES) {
                Figures f = measure(size, t, false);
                if (t == 1000 && f.median() > 1.1 * t) {
                    missed.add("median failover after a silent leader above 1.1T (issue #23): " + f.summary());
                }
                if (f.shareWithin(2L * t) < 0.99) {
                    missed.add(String.format(Locale.ROOT, "only %.1f%% of silent crashes recovered within 2T: %s",
                            100 * f.shareWithin(2L * t), f.summary()));
                }
            }
        }
        assertTrue(missed.isEmpty(), String.join("\n", missed));
    }

    /** Ten virtual minutes, three nodes, light load, T = 1000: the first election is the only one. */
    @Test
    void faultFreeRunHoldsNoElectionAfterTheFirst() {
        long seed = Long.getLong("wheelraft.sim.seed", 42L);
        CommittedLog committed = new CommittedLog("seed " + seed);
        SimCluster c = new SimCluster(seed, 3, i -> new CounterFsm(i, committed), o -> o.electionTimeoutMs(1000));
        CounterWorkload load = new CounterWorkload(c, 2, 4000);
        assertTrue(runWithLoad(c, load, () -> c.leaderIndex() >= 0, 20_000), "no leader; " + c.replayHint());
        int leader = c.leaderIndex();
        runWithLoad(c, load, () -> false, 10 * 60 * 1000);
        assertEquals(1, c.leaderTerms(), "elections in a fault-free run; " + c.replayHint());
        assertEquals(leader, c.leaderIndex());
        assertTrue(load.acknowledged() > 1000, "the load made little progress: " + load.acknowledged());
        System.out.println("[failover] fault-free 10 min, 3 nodes, T=1000: " + (c.leaderTerms() - 1) + " elections after the first, "
                + load.acknowledged() + " client ops acknowledged");
    }
}
