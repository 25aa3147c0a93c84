package io.wheelraft.example;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Whether every acknowledged increment survived a kill: each written group's counter is read
 * (linearizably) before the writes and after them, and the growth compared with what the writer
 * counted. An increment adds one, so the growth must be at least the acknowledged count (else an
 * acknowledged write is lost) and at most that plus the unknown ones (else something was applied
 * twice or out of nowhere); failed increments were certainly not applied. Stateless.
 */
final class LostWrites {

    /** A read that did not succeed: the group is not checked. */
    static final long UNREAD = Long.MIN_VALUE;

    /**
     * The outcome over the written groups (those with at least one increment sent). {@code lost}
     * groups grew by less than their acknowledged count, by {@code lostIncrements} in all;
     * {@code excess} groups grew by more than acknowledged plus unknown.
     */
    record Verdict(int groupsWritten, int groupsChecked, int unread, long acked, long unknown, long failed, int lostGroups,
                   long lostIncrements, int excessGroups) {
    }

    private LostWrites() {
    }

    /** Compares growth with counts, group by group (all arrays indexed alike). */
    static Verdict check(long[] before, long[] after, long[] acked, long[] unknown, long[] failed) {
        int written = 0;
        int checked = 0;
        int unread = 0;
        int lost = 0;
        long lostIncrements = 0;
        int excess = 0;
        long a = 0;
        long u = 0;
        long f = 0;
        for (int i = 0; i < before.length; i++) {
            if (acked[i] + unknown[i] + failed[i] == 0) {
                continue;
            }
            written++;
            a += acked[i];
            u += unknown[i];
            f += failed[i];
            if (before[i] == UNREAD || after[i] == UNREAD) {
                unread++;
                continue;
            }
            checked++;
            long grown = after[i] - before[i];
            if (grown < acked[i]) {
                lost++;
                lostIncrements += acked[i] - grown;
            } else if (grown > acked[i] + unknown[i]) {
                excess++;
            }
        }
        return new Verdict(written, checked, unread, a, u, f, lost, lostIncrements, excess);
    }

    /**
     * Each group's value by a linearizable read ({@link #UNREAD} for a read that failed), sixteen
     * at a time; every read ends within the client timeout.
     */
    static long[] read(ClusterChannels cluster, List<String> groupIds, long timeoutMs) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(16, r -> {
            Thread t = new Thread(r, "groups-bench-read");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Long>> reads = new ArrayList<>(groupIds.size());
            for (String g : groupIds) {
                reads.add(pool.submit(() -> {
                    CounterClient.Outcome o = new CounterClient(cluster, g, timeoutMs, CounterClient.MAX_SILENCE_MS).get();
                    return o.ok() ? o.value() : UNREAD;
                }));
            }
            long[] values = new long[groupIds.size()];
            for (int i = 0; i < values.length; i++) {
                try {
                    values[i] = reads.get(i).get();
                } catch (java.util.concurrent.ExecutionException e) {
                    values[i] = UNREAD;
                }
            }
            return values;
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
