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
                         int maxInflightAppends, int maxEntriesPerAppend, int maxBytesPerAppend) {

    public static RaftConfig from(String groupId, PeerId self, NodeOptions o) {
        return new RaftConfig(groupId, self, o.electionTimeoutMs(), o.connectionLostGraceMs(),
                o.maxInflightAppends(), o.maxEntriesPerAppend(), o.maxBytesPerAppend());
    }
}
