package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Paces the start of many groups in one process: before starting the next group, if
 * {@code awakeLimit} or more of those already started have not gone quiet yet, waits until a
 * quarter of them have gone quiet.
 *
 * <p>Why: until a group goes quiet it elects, its leader heartbeats every follower ten times a
 * second, and each of its nodes keeps timers running. Started all at once, 10,000 groups per
 * process kept two cores saturated: answers came seconds late, rounds timed out and started new
 * rounds, check-quorum deposed leaders, and no group settled for minutes. In waves, each group
 * elects and goes quiet while only a bounded number of others compete with it. The processes need
 * no coordination: they start the groups in the same order, so the groups awake in the slowest
 * one are among those the others started.
 *
 * <p>A wave that makes no progress for {@code stallMs} (no started group went quiet: the peer
 * processes are down or not started yet, so no group can elect) ends the pacing: the rest start
 * at once, as without it, and one line says so.
 *
 * <p>Counting the awake groups visits every started one that has not gone quiet yet, so it runs once per
 * {@code checkEvery} starts, and every {@code pollMs} while waiting. Not thread-safe: the thread
 * that starts the groups calls it.
 */
final class StartPacing {

    private static final Logger LOG = LoggerFactory.getLogger(StartPacing.class);

    /** Sleeps the starting thread; a test's advances its clock instead. */
    interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    private final int awakeLimit;
    private final int checkEvery;
    private final long stallMs;
    private final long pollMs;
    private final IntSupplier awake;
    private final LongSupplier clockMs;
    private final Sleeper sleeper;
    private int startsSinceCheck;
    private boolean gaveUp;
    private long waitedMs;

    StartPacing(int awakeLimit, long stallMs, long pollMs, IntSupplier awake, LongSupplier clockMs, Sleeper sleeper) {
        if (awakeLimit < 4) {
            throw new IllegalArgumentException("awakeLimit must be at least 4, was " + awakeLimit);
        }
        this.awakeLimit = awakeLimit;
        this.checkEvery = Math.max(1, awakeLimit / 4);
        this.stallMs = stallMs;
        this.pollMs = pollMs;
        this.awake = awake;
        this.clockMs = clockMs;
        this.sleeper = sleeper;
    }

    /** Returns when the next group may start (at once, unless too many started ones are awake). */
    void beforeStart() throws InterruptedException {
        if (gaveUp || ++startsSinceCheck < checkEvery) {
            return;
        }
        startsSinceCheck = 0;
        int now = awake.getAsInt();
        if (now < awakeLimit) {
            return;
        }
        long started = clockMs.getAsLong();
        long progressAt = started;
        int fewest = now;
        int target = awakeLimit - awakeLimit / 4;
        while (now >= target) {
            long t = clockMs.getAsLong();
            if (t - progressAt >= stallMs) {
                gaveUp = true;
                LOG.info("starting the remaining groups without pacing: {} started groups have stayed awake for {} ms "
                        + "(the peer processes may be down or still starting)", now, t - progressAt);
                break;
            }
            sleeper.sleep(pollMs);
            now = awake.getAsInt();
            if (now < fewest) {
                fewest = now;
                progressAt = clockMs.getAsLong();
            }
        }
        waitedMs += clockMs.getAsLong() - started;
    }

    /** Time spent waiting so far (for the start-up log line). */
    long waitedMs() {
        return waitedMs;
    }

    /** Whether a stalled wave ended the pacing. */
    boolean gaveUp() {
        return gaveUp;
    }
}
