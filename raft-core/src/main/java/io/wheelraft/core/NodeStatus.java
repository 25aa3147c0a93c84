package io.wheelraft.core;

import java.time.Instant;
import java.util.Map;

/**
 * A snapshot of a node's state for operators and the {@code status} command.
 *
 * @param followerMatchIndex on the leader, the highest index known replicated on each follower
 * @param roleSince          when the node took its current role in its current term (for a leader: the moment it
 *                           won), on this machine's wall clock; null if not known
 */
public record NodeStatus(String groupId, PeerId self, Role role, long term, PeerId leader,
                         long commitIndex, long appliedIndex, long firstLogIndex, long lastLogIndex,
                         Configuration configuration, Map<PeerId, Long> followerMatchIndex, Instant roleSince) {

    /** A status that does not say since when the role is held. */
    public NodeStatus(String groupId, PeerId self, Role role, long term, PeerId leader, long commitIndex, long appliedIndex,
                      long firstLogIndex, long lastLogIndex, Configuration configuration, Map<PeerId, Long> followerMatchIndex) {
        this(groupId, self, role, term, leader, commitIndex, appliedIndex, firstLogIndex, lastLogIndex, configuration, followerMatchIndex, null);
    }
}
