package io.wheelraft.core;

import io.wheelraft.core.node.WeakInterner;

import java.util.Collections;
import java.util.SortedSet;

/**
 * One instance per distinct set of members, shared by every {@link Configuration} that lists
 * them. A process hosting many groups with the same members holds a few configurations per group
 * (current, previous, the initial one); without sharing, each kept its own sorted tree of the same
 * peers, a few hundred bytes per group.
 */
final class SharedPeerSets {

    private static final WeakInterner<SortedSet<PeerId>> SETS = new WeakInterner<>();

    private SharedPeerSets() {
    }

    /** The shared unmodifiable set equal to {@code peers} (which the caller no longer changes). */
    static SortedSet<PeerId> of(SortedSet<PeerId> peers) {
        return peers.isEmpty() ? Collections.emptySortedSet() : SETS.intern(Collections.unmodifiableSortedSet(peers));
    }
}
