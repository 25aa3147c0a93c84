package io.wheelraft.core.consensus;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;

/**
 * The settings the consensus machine itself reads (a slice of {@link io.wheelraft.core.NodeOptions}).
 *
 * @param connectionLostGraceMs after the transport reports the leader's connection broke, how long
 *                              with no word from it before it counts as lost
 */
public record RaftConfig(String groupId, PeerId self, int electionTimeoutMs, int connectionLostGraceMs,
                         int maxInflightAppends, int maxEntriesPerAppend, int maxBytesPerAppend,
                         boolean leaseReads, int leaseClockDriftMs) {

    public static RaftConfig from(String groupId, PeerId self, NodeOptions o) {
        return new RaftConfig(groupId, self, o.electionTimeoutMs(), o.connectionLostGraceMs(),
                o.maxInflightAppends(), o.maxEntriesPerAppend(), o.maxBytesPerAppend(),
                o.readOnlyOption() == io.wheelraft.core.ReadOnlyOption.LEASE, o.leaseClockDriftMs());
    }

    /**
     * How long after a quorum acknowledged a heartbeat the leader may still serve lease reads.
     * Voters refuse other candidates for the election timeout after hearing from the leader, but
     * only for half the grace period when they saw its connection break, so the lease is the
     * shorter of the two, minus the allowed clock drift.
     */
    public long leaseMs() {
        return Math.min(electionTimeoutMs, connectionLostGraceMs / 2) - (long) leaseClockDriftMs;
    }
}
