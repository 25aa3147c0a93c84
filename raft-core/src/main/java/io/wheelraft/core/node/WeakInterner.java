package io.wheelraft.core.node;

import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Hands out one shared instance per distinct immutable value (by {@code equals}), for values that
 * many groups of one process hold copies of: their member sets and configuration entries are
 * mostly the same. A value stays here only while something else uses it (weak keys and values),
 * so groups that leave take theirs with them. Only for immutable values: every holder sees the
 * same object.
 *
 * <p>Thread-safe: groups are made and apply entries on many threads.
 */
public final class WeakInterner<T> {

    /** Key and value are the same canonical instance; the value is weak too so it does not keep its key alive. */
    private final Map<T, WeakReference<T>> canonical = new WeakHashMap<>();

    /** The shared instance equal to {@code value}; {@code value} itself if none is held yet (null stays null). */
    public synchronized T intern(T value) {
        if (value == null) {
            return null;
        }
        WeakReference<T> ref = canonical.get(value);
        T shared = ref == null ? null : ref.get();
        if (shared == null) {
            canonical.put(value, new WeakReference<>(value));
            return value;
        }
        return shared;
    }
}
