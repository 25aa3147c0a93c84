package io.wheelraft.core;

import java.util.Map;

/**
 * A snapshot of a node's state for operators and the {@code status} command.
 *
 * @param followerMatchIndex on the leader, the highest index known replicated on each follower
 */
public record NodeStatus(String groupId, PeerId self, Role role, long term, PeerId leader,
                         long commitIndex, long appliedIndex, long firstLogIndex, long lastLogIndex,
                         Configuration configuration, Map<PeerId, Long> followerMatchIndex) {
}
