package io.wheelraft.example;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How long each group a killed process led went without a leader, two ways: until the survivor
 * that leads it became leader, by that server's own record (same host, same clock as the kill);
 * and until a poll of the survivors first found it led, an upper bound late by up to one poll
 * interval plus the poll's round trip (and by as much as a busy survivor takes to answer). Groups
 * no survivor led by the end are unresolved.
 *
 * <p>Not thread-safe: fed by the one thread that polls.
 */
final class FailoverTimes {

    private final int[] groups;
    private final long[] ledAfterNanos;
    private final long[] electedAfterMs;
    private final long killNanos;
    private final long killEpochMs;
    private int remaining;

    /**
     * @param victimGroups the groups the killed process led just before the kill (any order, no repeats)
     * @param killEpochMs  the kill by the wall clock the servers' leadership records use
     */
    FailoverTimes(int[] victimGroups, long killNanos, long killEpochMs) {
        this.groups = victimGroups.clone();
        Arrays.sort(groups);
        for (int i = 1; i < groups.length; i++) {
            if (groups[i] == groups[i - 1]) {
                throw new IllegalArgumentException("group " + groups[i] + " listed twice");
            }
        }
        this.ledAfterNanos = new long[groups.length];
        Arrays.fill(ledAfterNanos, -1);
        this.electedAfterMs = new long[groups.length];
        this.killNanos = killNanos;
        this.killEpochMs = killEpochMs;
        this.remaining = groups.length;
    }

    /**
     * A survivor answered at {@code atNanos} that it leads {@code led}, each since {@code sinceEpochMs}
     * (same order); groups not the victim's are ignored. A leadership that started before the kill
     * (a group the victim had just lost) counts as 0.
     */
    void observe(List<Integer> led, List<Long> sinceEpochMs, long atNanos) {
        if (sinceEpochMs.size() != led.size()) {
            throw new IllegalArgumentException(led.size() + " led groups but " + sinceEpochMs.size() + " leadership starts");
        }
        for (int k = 0; k < led.size(); k++) {
            int i = Arrays.binarySearch(groups, led.get(k));
            if (i >= 0 && ledAfterNanos[i] < 0) {
                ledAfterNanos[i] = Math.max(0, atNanos - killNanos);
                electedAfterMs[i] = Math.max(0, sinceEpochMs.get(k) - killEpochMs);
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

    /** The resolved groups' times until their new leader was elected (the servers' records), in milliseconds, sorted. */
    long[] sortedElectedMillis() {
        long[] out = new long[groups.length - remaining];
        int n = 0;
        for (int i = 0; i < groups.length; i++) {
            if (ledAfterNanos[i] >= 0) {
                out[n++] = electedAfterMs[i];
            }
        }
        Arrays.sort(out);
        return out;
    }

    /** The resolved groups' times until a poll saw them led, in milliseconds, sorted. */
    long[] sortedSeenMillis() {
        return Arrays.stream(ledAfterNanos).filter(t -> t >= 0).map(TimeUnit.NANOSECONDS::toMillis).sorted().toArray();
    }

    /** How many of {@code millis} are at most {@code limitMs} (the groups led again within a target). */
    static long countWithin(long[] millis, long limitMs) {
        return java.util.Arrays.stream(millis).filter(t -> t <= limitMs).count();
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
