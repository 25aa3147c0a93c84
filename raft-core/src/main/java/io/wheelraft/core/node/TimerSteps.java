package io.wheelraft.core.node;

import io.wheelraft.core.CampaignSlots;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;

import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * What a {@link NodeImpl}'s timers do when they fire: the periodic ones of {@link NodeTimers}
 * (election, vote, step-down, heartbeat, snapshot) and the one-shot ones the core asks for (an
 * election retry after a lost round, a wake-up for a held vote answer or a failover turn). Each
 * firing becomes a step of the core on the node's Raft lane, or nothing once the node stopped.
 * It exists apart from the node so that the node keeps starting, stopping and serving its
 * callers, and when each timed step runs sits in one place. Runs on the Raft lane.
 */
final class TimerSteps {

    private final NodeImpl node;
    private final NodeOptions options;
    private final Random random;
    private final NodeMirror mirror;

    TimerSteps(NodeImpl node, NodeOptions options, Random random, NodeMirror mirror) {
        this.node = node;
        this.options = options;
        this.random = random;
        this.mirror = mirror;
    }

    /** A (pre-)vote round was lost: try again after a short random pause, not a whole election timeout. */
    void scheduleElectionRetry() {
        int hb = options.heartbeatIntervalMs();
        int delay = NodeTimers.randomIn(random, hb, 4 * hb) * node.core().electionBackoff();
        node.timer().newTimeout(t -> node.onLane(() -> node.step(() -> node.core().onElectionRetry(node.now()))), delay, TimeUnit.MILLISECONDS);
    }

    /**
     * The core would campaign but its process's campaign slots are all taken: wait in line. When
     * a slot is granted the core takes it on the lane; a node halted meanwhile hands it on.
     */
    void awaitCampaignSlot() {
        CampaignSlots slots = options.campaignSlots();
        slots.awaitSlot(node.core(), node.now(), () -> node.onLaneOr(
                () -> node.step(() -> node.core().onCampaignSlotGranted(node.now())),
                () -> slots.release(node.core())));
    }

    /** The core asked to be woken at {@code atMs} (a held vote answer, a failover turn): it is told which request fired. */
    void scheduleWake(long atMs) {
        long delay = Math.max(0, atMs - node.now());
        node.timer().newTimeout(t -> node.onLane(() -> node.step(() -> node.core().onWake(node.now(), atMs))), delay, TimeUnit.MILLISECONDS);
    }

    private void stepUnlessHalted(Runnable decision) {
        if (!node.halted()) {
            node.step(decision);
        }
    }

    /** What {@link NodeTimers} calls when one of its timers fires. */
    NodeTimers.Events events() {
        return new TimerEvents();
    }

    private final class TimerEvents implements NodeTimers.Events {
        @Override
        public void electionTimeout() {
            stepUnlessHalted(() -> node.core().onElectionTimeout(node.now()));
        }

        @Override
        public void voteTimeout() {
            stepUnlessHalted(() -> node.core().onVoteTimeout(node.now()));
        }

        @Override
        public void stepDownCheck() {
            stepUnlessHalted(() -> node.core().onStepDownCheck(node.now()));
        }

        @Override
        public void heartbeat() {
            if (!node.halted()) {
                node.step(() -> node.core().onHeartbeatTimeout(node.now()));
                // The operator's view of follower progress is refreshed once per heartbeat, not
                // copied on every append answer (that is the replication hot path).
                Map<PeerId, Long> matches = node.core().followerMatchIndexes();
                mirror.matchIndexes = matches;
                node.metrics().followersSeen(matches.keySet());
            }
        }

        @Override
        public void snapshotDue() {
            if (!node.halted()) {
                node.snapshots().save(node.timedSnapshot(null));
            }
        }
    }
}
