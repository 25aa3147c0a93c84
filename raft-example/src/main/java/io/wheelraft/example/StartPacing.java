package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>A wave that makes no progress for {@code stallMs} (no started group went quiet) is written
 * off: its groups no longer count as awake (they elect when they can) and the next wave starts.
 * Ending the pacing there, as this once did, started tens of thousands of groups at once on a
 * 100,000-group start after one such wave (a process paused by a long collection holds up every
 * election it takes part in), and the processes never settled. Only {@value #STALLS_TO_GIVE_UP}
 * stalled waves in a row, none with any group going quiet (the peer processes are down or not
 * started yet, so no group can elect), end the pacing: the rest start at once, and one line says
 * so.
 *
 * <p>Counting the awake groups visits every started one that has not gone quiet yet, so it runs once per
 * {@code checkEvery} starts, and every {@code pollMs} while waiting. Not thread-safe: the thread
 * that starts the groups calls it.
 */
final class StartPacing {

    private static final Logger LOG = LoggerFactory.getLogger(StartPacing.class);

    /** Stalled waves in a row that end the pacing. */
    static final int STALLS_TO_GIVE_UP = 3;

    /** The started groups that have not gone quiet yet: how many, and forgetting them (a stalled wave). */
    interface AwakeGroups {
        int count();

        void forget();
    }

    /** Sleeps the starting thread; a test's advances its clock instead. */
    interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    private final int awakeLimit;
    private final int checkEvery;
    private final long stallMs;
    private final long pollMs;
    private final AwakeGroups awake;
    private final LongSupplier clockMs;
    private final Sleeper sleeper;
    private int startsSinceCheck;
    private boolean gaveUp;
    private long waitedMs;
    private int stallsInARow;
    private int stalls;

    StartPacing(int awakeLimit, long stallMs, long pollMs, AwakeGroups awake, LongSupplier clockMs, Sleeper sleeper) {
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
        int now = awake.count();
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
                stalled(now, t - progressAt, progressAt != started);
                break;
            }
            sleeper.sleep(pollMs);
            now = awake.count();
            if (now < fewest) {
                fewest = now;
                progressAt = clockMs.getAsLong();
            }
        }
        if (now < target) {
            stallsInARow = 0;
        }
        waitedMs += clockMs.getAsLong() - started;
    }

    /** A wave made no progress for the stall time: write it off, or end the pacing after too many such waves in a row. */
    private void stalled(int awakeNow, long forMs, boolean progressedFirst) {
        stalls++;
        stallsInARow = progressedFirst ? 1 : stallsInARow + 1;
        awake.forget();
        if (stallsInARow >= STALLS_TO_GIVE_UP) {
            gaveUp = true;
            LOG.info("starting the remaining groups without pacing: {} waves in a row saw no started group go quiet, the last"
                    + " {} groups for {} ms (the peer processes may be down or still starting)", stallsInARow, awakeNow, forMs);
        } else {
            LOG.info("{} started groups have stayed awake for {} ms; starting the next groups without waiting for them"
                    + " (stalled wave {} in a row)", awakeNow, forMs, stallsInARow);
        }
    }

    /** Time spent waiting so far (for the start-up log line). */
    long waitedMs() {
        return waitedMs;
    }

    /** Whether stalled waves ended the pacing. */
    boolean gaveUp() {
        return gaveUp;
    }

    /** Stalled waves written off so far (for the start-up log line). */
    int stalls() {
        return stalls;
    }
}
