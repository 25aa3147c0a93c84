package io.wheelraft.timer.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The threads started after a point in time (say, a timer's worker), and their CPU time: what
 * the harnesses charge to the timer under test.
 */
final class NewThreads {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Set<Long> existing;

    private NewThreads(Set<Long> existing) {
        this.existing = existing;
    }

    /** Remembers the threads alive now. */
    static NewThreads since() {
        return new NewThreads(Arrays.stream(THREADS.getAllThreadIds()).boxed().collect(Collectors.toSet()));
    }

    /** Ids of the threads started since {@link #since()} that are alive now. */
    long[] started() {
        return Arrays.stream(THREADS.getAllThreadIds()).filter(id -> !existing.contains(id)).toArray();
    }

    /** CPU time, in nanoseconds, the given threads have used (threads that have ended count 0). */
    static long cpuNanos(long[] ids) {
        long sum = 0;
        for (long id : ids) {
            long t = THREADS.getThreadCpuTime(id);
            if (t > 0) {
                sum += t;
            }
        }
        return sum;
    }
}
