package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;

import java.time.Instant;
import java.util.Map;

/**
 * Copies of a node's lane-owned state for readers on other threads ({@code status()}, the public
 * queries, the timers, snapshot transfers). Written only on the node's Raft lane, as the core's
 * batches are carried out; read anywhere (each field is volatile, none is read with another
 * atomically).
 */
final class NodeMirror {
    volatile Role role = Role.FOLLOWER;
    volatile long term;
    volatile PeerId leader;
    volatile long commitIndex;
    /** Last index this node proposed as leader; with {@link #commitIndex}, tells whether anything is in flight. */
    volatile long lastProposedIndex;
    volatile long lastLeaderContactMs;
    volatile Configuration configuration;
    volatile Map<PeerId, Long> matchIndexes = Map.of();
    /** Quiet: no timers, no heartbeats of its own (see the core's Quiescence). */
    volatile boolean quiet;
    /**
     * When the node took its current role in its current term, on the wall clock: for operators
     * and for measuring failover from outside by the new leader's own record of the moment.
     */
    volatile Instant roleSince = Instant.now();
}
