package io.wheelraft.core.node;

import io.wheelraft.core.Role;
import io.wheelraft.timer.Clock;
import io.wheelraft.timer.RepeatedTimer;
import io.wheelraft.timer.Timer;

import java.util.Random;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * A node's {@link RepeatedTimer}s on the shared wheel. Each callback only posts an event to the
 * node's Raft lane; none blocks the wheel. Which ones run depends on the role:
 * follower, learner and repairing: election; candidate: vote; leader: step-down and heartbeat; all: snapshot.
 */
final class NodeTimers {

    final RepeatedTimer election;
    final RepeatedTimer vote;
    final RepeatedTimer stepDown;
    final RepeatedTimer heartbeat;
    final RepeatedTimer snapshot;

    /** The events the timers post, each run on the Raft lane. */
    interface Events {
        void electionTimeout();

        void voteTimeout();

        void stepDownCheck();

        void heartbeat();

        void snapshotDue();
    }

    NodeTimers(String name, Timer timer, Clock clock, Random random, int electionTimeoutMs, int heartbeatMs,
               int snapshotIntervalSecs, LongSupplier lastLeaderContactMs, IntSupplier electionBackoff, SerialLane lane, Events events) {
        this.election = new ElectionTimer(name + "-election", electionTimeoutMs, heartbeatMs, timer, clock, random, lastLeaderContactMs,
                electionBackoff,
                () -> lane.execute(events::electionTimeout));
        this.vote = new Repeating(name + "-vote", electionTimeoutMs, timer, () -> lane.execute(events::voteTimeout)) {
            @Override
            protected int adjustTimeout(int timeoutMs) {
                return randomIn(random, timeoutMs, 2 * timeoutMs);
            }
        };
        this.stepDown = new Repeating(name + "-stepdown", Math.max(1, electionTimeoutMs / 2), timer,
                () -> lane.execute(events::stepDownCheck));
        this.heartbeat = new Repeating(name + "-heartbeat", heartbeatMs, timer, () -> lane.execute(events::heartbeat));
        int snapshotMs = (int) Math.min(Integer.MAX_VALUE, Math.max(1L, snapshotIntervalSecs * 1000L));
        this.snapshot = new Repeating(name + "-snapshot", snapshotMs, timer, () -> lane.execute(events::snapshotDue)) {
            @Override
            protected int adjustTimeout(int timeoutMs) {
                // +-10% so groups started together do not all snapshot at once
                return randomIn(random, timeoutMs - timeoutMs / 10, timeoutMs + timeoutMs / 10 + 1);
            }
        };
    }

    /**
     * Runs the timers of {@code role} and stops the others (the snapshot timer is left as it is);
     * a stopped node (any other role) destroys them all. A follower's election timer that already
     * runs is left alone: each round measures its wait from the last leader contact itself.
     */
    void enter(Role role) {
        switch (role) {
            case LEADER -> {
                election.stop();
                vote.stop();
                stepDown.restart();
                heartbeat.restart();
            }
            case CANDIDATE -> {
                election.stop();
                stepDown.stop();
                heartbeat.stop();
                vote.restart();
            }
            case FOLLOWER, LEARNER, REPAIRING -> { // a repairing node never campaigns (RaftCore), but its timer keeps running for after the repair
                vote.stop();
                stepDown.stop();
                heartbeat.stop();
                if (!election.isRunning()) {
                    election.start();
                }
            }
            default -> destroyAll();
        }
    }

    /**
     * A quiet node stops every timer, the snapshot one too (nothing new is applied while quiet), so
     * it holds no wheel entry; waking runs the role's timers again.
     */
    void quiet(boolean quiet, Role role, boolean snapshots) {
        if (quiet) {
            election.stop();
            vote.stop();
            stepDown.stop();
            heartbeat.stop();
            snapshot.stop();
            return;
        }
        enter(role);
        if (snapshots && !snapshot.isRunning()) {
            snapshot.start();
        }
    }

    void destroyAll() {
        election.destroy();
        vote.destroy();
        stepDown.destroy();
        heartbeat.destroy();
        snapshot.destroy();
    }

    static int randomIn(Random random, int fromInclusive, int toExclusive) {
        return toExclusive <= fromInclusive ? fromInclusive : fromInclusive + random.nextInt(toExclusive - fromInclusive);
    }

    private static class Repeating extends RepeatedTimer {
        private final Runnable action;

        Repeating(String name, int timeoutMs, Timer timer, Runnable action) {
            super(name, timeoutMs, timer);
            this.action = action;
        }

        @Override
        protected void onTrigger() {
            action.run();
        }
    }

    /**
     * Fires a randomised election timeout after the last word from the leader, not after its own
     * previous firing: heartbeats only record the time of contact (no cancel-and-reschedule per
     * message), and each rescheduling measures from that contact. A silent leader is so detected
     * within {@code [T, 2T)} of its last heartbeat, never up to 3T. The draw stops two heartbeat
     * intervals short of 2T, leaving room for the pre-vote and vote round trips, so that a new
     * leader is elected within 2T of the last heartbeat (see docs/divergence.md).
     */
    private static final class ElectionTimer extends Repeating {
        private final Clock clock;
        private final Random random;
        private final LongSupplier lastLeaderContactMs;
        private final IntSupplier backoff;
        private final int heartbeatMs;

        ElectionTimer(String name, int timeoutMs, int heartbeatMs, Timer timer, Clock clock, Random random,
                      LongSupplier lastLeaderContactMs, IntSupplier backoff, Runnable action) {
            super(name, timeoutMs, timer, action);
            this.clock = clock;
            this.random = random;
            this.lastLeaderContactMs = lastLeaderContactMs;
            this.backoff = backoff;
            this.heartbeatMs = heartbeatMs;
        }

        @Override
        protected int adjustTimeout(int timeoutMs) {
            int randomised = randomIn(random, timeoutMs, Math.max(timeoutMs + 1, 2 * timeoutMs - 2 * heartbeatMs));
            long sinceContact = clock.millis() - lastLeaderContactMs.getAsLong();
            long remaining = randomised - sinceContact;
            // Leader already lost (a pre-vote round is under way): retry after a fresh random wait,
            // longer while rounds keep failing (Election#backoffFactor).
            return remaining <= 0 ? randomised * backoff.getAsInt() : (int) remaining;
        }
    }
}
