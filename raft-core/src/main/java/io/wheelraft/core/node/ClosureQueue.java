package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The leader's closures of proposed entries, by log index, until the apply lane runs them or a
 * leadership change fails them. Each closure is completed exactly once. Thread-safe: the Raft
 * lane appends and fails, the apply lane takes.
 */
final class ClosureQueue {

    private record Entry(long index, Closure done) {
    }

    private final ArrayDeque<Entry> queue = new ArrayDeque<>(1); // grows on demand; idle groups keep two slots, not seventeen

    synchronized void append(long index, Closure done) {
        if (done != null) {
            queue.add(new Entry(index, done));
        }
    }

    /** Removes and returns the closure for {@code index}, dropping (and failing) any older leftovers. */
    Closure take(long index) {
        List<Closure> stale = new ArrayList<>();
        Closure found = null;
        synchronized (this) {
            while (!queue.isEmpty() && queue.peek().index() <= index) {
                Entry e = queue.poll();
                if (e.index() == index) {
                    found = e.done();
                } else {
                    stale.add(e.done());
                }
            }
        }
        for (Closure c : stale) {
            CallerCode.complete(c, Status.error(io.wheelraft.core.RaftError.INTERNAL, "entry was applied without its closure"));
        }
        return found;
    }

    /** Fails every closure for index <= {@code index} with {@code status}. */
    void failUpTo(long index, Status status) {
        List<Closure> failed = new ArrayList<>();
        synchronized (this) {
            while (!queue.isEmpty() && queue.peek().index() <= index) {
                failed.add(queue.poll().done());
            }
        }
        for (Closure c : failed) {
            CallerCode.complete(c, status);
        }
    }

    /** Fails every closure for index >= {@code fromIndex} with {@code status}. */
    void failFrom(long fromIndex, Status status) {
        List<Closure> failed = new ArrayList<>();
        synchronized (this) {
            while (!queue.isEmpty() && queue.peekLast().index() >= fromIndex) {
                failed.add(queue.pollLast().done());
            }
        }
        for (int i = failed.size() - 1; i >= 0; i--) {
            CallerCode.complete(failed.get(i), status); // one that throws must not keep the rest from failing
        }
    }
}
