package io.wheelraft.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Notices threads started while it watches. Threads of earlier tests may still be ending, so
 * it compares the set of live threads rather than a count.
 */
final class ThreadWatch {

    private final Set<Thread> before = live();

    /** Fails if any thread started since this watch was created is still alive. */
    void assertNoNewThreads() {
        Set<Thread> added = new HashSet<>(live());
        added.removeAll(before);
        assertEquals(Set.of(), added.stream().map(Thread::getName).collect(Collectors.toSet()), "threads started");
    }

    private static Set<Thread> live() {
        return new HashSet<>(Thread.getAllStackTraces().keySet());
    }
}
