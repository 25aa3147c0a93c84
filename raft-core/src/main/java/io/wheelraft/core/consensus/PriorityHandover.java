package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.logging.RateLimitedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's side of priority election (as Ratis does): it hands leadership, through the
 * ordinary leader transfer, to a voter whose effective priority is strictly higher than its own
 * once that voter holds everything committed and answers. Only strictly higher, so equal
 * priorities never pass leadership back and forth; one attempt at a time; after an attempt that
 * did not move leadership (the transfer timed out and this leader resumed) the next waits twice
 * as long, from two election timeouts up to 32. One per leadership term; owned by the Raft lane.
 */
final class PriorityHandover {

    private static final Logger LOG = LoggerFactory.getLogger(RaftCore.class);
    /**
     * One line per interval for all groups of the process: when a process comes back, every group
     * that prefers it hands leadership back within a few heartbeats (thousands at once, a line
     * each, in a process hosting many groups).
     */
    private static final RateLimitedLog HANDOVER_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    /** The most doublings of the wait after failed attempts (32 election timeouts). */
    private static final int MAX_BACKOFF_SHIFT = 5;

    private final String groupId;
    private final PeerId self;
    private final long electionTimeoutMs;
    private final RateLimitedLog log;
    private int attempts;
    private long notBeforeMs;

    PriorityHandover(String groupId, PeerId self, long electionTimeoutMs) {
        this(groupId, self, electionTimeoutMs, HANDOVER_LOG);
    }

    /** With {@code log} for the handover line (tests; otherwise the process-wide one). */
    PriorityHandover(String groupId, PeerId self, long electionTimeoutMs, RateLimitedLog log) {
        this.groupId = groupId;
        this.self = self;
        this.electionTimeoutMs = electionTimeoutMs;
        this.log = log;
    }

    /** What the leader's replication knows that the decision needs. */
    interface Followers {
        Membership membership();

        /** This leader's own effective priority. */
        int ownPriority();

        /** A follower's effective priority as the leader knows it. */
        int priority(PeerId peer);

        long match(PeerId peer);

        /** Did it answer within the election timeout, and is it not fenced after a storage fault? */
        boolean healthy(PeerId peer, long nowMs);
    }

    /**
     * The voter to hand leadership to now, or null: the most preferred healthy voter of the
     * (non-joint) configuration whose priority is strictly higher than the leader's and whose log
     * holds {@code commitIndex}. Choosing one counts as an attempt: the next may come only after
     * the back-off.
     *
     * @param settled the leader committed an entry of its term, and no transfer or membership
     *                change is under way
     */
    PeerId target(Followers f, long commitIndex, boolean settled, long nowMs) {
        Membership m = f.membership();
        if (nowMs < notBeforeMs || m.isJoint() || !settled) {
            return null;
        }
        int own = f.ownPriority();
        PeerId best = null;
        var order = ElectionPriority.preferredFirst(f::priority, f::match);
        for (PeerId p : m.current().peers()) {
            if (!p.equals(self) && f.priority(p) > own && f.match(p) >= commitIndex && f.healthy(p, nowMs)
                    && (best == null || order.compare(p, best) < 0)) {
                best = p;
            }
        }
        if (best != null) {
            attempts++;
            notBeforeMs = nowMs + (electionTimeoutMs << Math.min(attempts, MAX_BACKOFF_SHIFT));
            log.info(nowMs, "{}/{} hands leadership to {}: election priority {} is higher than its own {} (attempt {})",
                    groupId, self, best, f.priority(best), own, attempts);
        }
        return best;
    }

    /** Attempts made in this leadership term (for tests). */
    int attempts() {
        return attempts;
    }
}
