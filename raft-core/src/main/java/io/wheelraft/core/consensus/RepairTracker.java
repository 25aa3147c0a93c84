package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * The leader's record of followers that answered {@code repairing=true}: after a storage fault
 * they may lack entries they acknowledged, so they are fenced until this leader tells them their
 * log holds everything they may have acknowledged (protocol-aware recovery, Alagappan et al.,
 * FAST '18).
 *
 * <p>When a follower first answers as repairing, its <em>repair target</em> is this leader's last
 * index at that moment. Every committed entry is in a legitimate leader's log, so at or below
 * it; and every acknowledgement of that follower this leader counted came before, so it is at
 * or below it too. Once the follower's log matches ours through the target, it may vote again.
 * Acknowledgements of a repairing follower are not counted towards commitment (it may lose them
 * again), so the target never has to cover them. An answer with {@code repairing=false} ends the
 * episode: a later fault starts a new one with a new target.
 *
 * <p>Lives in one leader's {@link Replication}; owned by the node's Raft lane.
 */
final class RepairTracker {

    private static final Logger LOG = LoggerFactory.getLogger(RepairTracker.class);

    private final PeerId self;
    private final Map<PeerId, Long> targets = new HashMap<>();

    RepairTracker(PeerId self) {
        this.self = self;
    }

    /**
     * Notes the repairing flag of an answer from {@code peer}, given this leader's last index now.
     *
     * @return true if the peer's repair just ended (its acknowledgements count again)
     */
    boolean onAnswer(PeerId peer, boolean repairing, long leaderLastIndex) {
        if (!repairing) {
            if (targets.remove(peer) != null) {
                LOG.info("{}: {} is repaired and votes again", self, peer);
                return true;
            }
            return false;
        }
        if (!targets.containsKey(peer)) {
            targets.put(peer, leaderLastIndex);
            LOG.info("{}: {} is repairing after a storage fault; it votes again once its log matches ours through {}",
                    self, peer, leaderLastIndex);
        }
        return false;
    }

    /** Is {@code peer} fenced (its acknowledgements count for nothing, it cannot take leadership)? */
    boolean repairing(PeerId peer) {
        return targets.containsKey(peer);
    }

    /**
     * Should an append to {@code peer} whose previous entry is {@code prevIndex} carry
     * {@code repair_complete}? Only when both it and the follower's durable match reach the target:
     * the follower accepts the flag only if it holds our entries through {@code prevIndex} durably.
     */
    boolean completes(PeerId peer, long prevIndex, long match) {
        Long target = targets.get(peer);
        return target != null && prevIndex >= target && match >= target;
    }
}
