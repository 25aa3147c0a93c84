package io.wheelraft.core;

import java.lang.ref.WeakReference;
import java.util.Collections;
import java.util.Map;
import java.util.SortedSet;
import java.util.WeakHashMap;

/**
 * One instance per distinct set of members, shared by every {@link Configuration} that lists
 * them. A process hosting many groups with the same members holds a few configurations per group
 * (current, previous, the initial one); without sharing, each kept its own sorted tree of the same
 * peers, a few hundred bytes per group. A set stays here only while some configuration uses it
 * (weak keys and values), so groups that leave take their sets with them.
 *
 * <p>Thread-safe: configurations are made on many threads.
 */
final class SharedPeerSets {

    /** Key and value are the same canonical set; the value is weak too so it does not keep its key alive. */
    private static final Map<SortedSet<PeerId>, WeakReference<SortedSet<PeerId>>> SETS = new WeakHashMap<>();

    private SharedPeerSets() {
    }

    /** The shared unmodifiable set equal to {@code peers} (which the caller no longer changes). */
    static SortedSet<PeerId> of(SortedSet<PeerId> peers) {
        if (peers.isEmpty()) {
            return Collections.emptySortedSet();
        }
        synchronized (SETS) {
            WeakReference<SortedSet<PeerId>> ref = SETS.get(peers);
            SortedSet<PeerId> shared = ref == null ? null : ref.get();
            if (shared == null) {
                shared = Collections.unmodifiableSortedSet(peers);
                SETS.put(shared, new WeakReference<>(shared));
            }
            return shared;
        }
    }
}
