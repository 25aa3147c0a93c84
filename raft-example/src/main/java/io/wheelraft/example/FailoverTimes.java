package io.wheelraft.example;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How long each group a killed process led went without a leader: from the kill until a poll of
 * the survivors first found one of them leading it. Each time is an upper bound, late by up to one
 * poll interval plus the poll's own round trip. Groups no survivor led by the end are unresolved.
 *
 * <p>Not thread-safe: fed by the one thread that polls.
 */
final class FailoverTimes {

    private final int[] groups;
    private final long[] ledAfterNanos;
    private final long killNanos;
    private int remaining;

    /** @param victimGroups the groups the killed process led just before the kill (any order, no repeats) */
    FailoverTimes(int[] victimGroups, long killNanos) {
        this.groups = victimGroups.clone();
        Arrays.sort(groups);
        for (int i = 1; i < groups.length; i++) {
            if (groups[i] == groups[i - 1]) {
                throw new IllegalArgumentException("group " + groups[i] + " listed twice");
            }
        }
        this.ledAfterNanos = new long[groups.length];
        Arrays.fill(ledAfterNanos, -1);
        this.killNanos = killNanos;
        this.remaining = groups.length;
    }

    /** A survivor answered at {@code atNanos} that it leads {@code led}; groups not the victim's are ignored. */
    void observe(List<Integer> led, long atNanos) {
        for (int g : led) {
            int i = Arrays.binarySearch(groups, g);
            if (i >= 0 && ledAfterNanos[i] < 0) {
                ledAfterNanos[i] = Math.max(0, atNanos - killNanos);
                remaining--;
            }
        }
    }

    int victimGroups() {
        return groups.length;
    }

    /** Groups no survivor has been seen leading yet. */
    int unresolved() {
        return remaining;
    }

    boolean allLed() {
        return remaining == 0;
    }

    /** The resolved groups' times in milliseconds, sorted. */
    long[] sortedMillis() {
        return Arrays.stream(ledAfterNanos).filter(t -> t >= 0).map(TimeUnit.NANOSECONDS::toMillis).sorted().toArray();
    }

    /**
     * The nearest-rank {@code q} percentile over all the victim's groups, the unresolved counted
     * as longer than any resolved one: -1 when the rank falls among the unresolved (or there are
     * no groups), else the time in milliseconds.
     */
    static long percentile(long[] sortedMillis, int unresolved, double q) {
        int total = sortedMillis.length + unresolved;
        if (total == 0) {
            return -1;
        }
        int i = Math.max(0, (int) Math.ceil(q * total) - 1);
        return i < sortedMillis.length ? sortedMillis[i] : -1;
    }
}
