package io.wheelraft.example;

import java.util.Arrays;
import java.util.Random;

/**
 * Which groups a benchmark phase writes to: all of {@code 0..groups-1} when there are at most
 * {@code max}, else {@code max} of them drawn at random without repeats. Each written group has
 * its own {@code RaftClient} in the benchmark's process (its sequence numbers, leader and retry
 * state; the connections and timer are shared), so writing to every one of 100,000 groups would
 * measure the client's bookkeeping, not the servers. Stateless.
 */
final class GroupSample {

    private GroupSample() {
    }

    /** The sampled group numbers, sorted; the same for the same {@code random} seed. */
    static int[] pick(int groups, int max, Random random) {
        if (groups < 1 || max < 1) {
            throw new IllegalArgumentException("need at least one group and a sample of at least one, were " + groups + " and " + max);
        }
        int[] all = new int[groups];
        for (int i = 0; i < groups; i++) {
            all[i] = i;
        }
        int n = Math.min(groups, max);
        for (int i = 0; i < n; i++) { // a partial Fisher-Yates shuffle: the first n are the sample
            int j = i + random.nextInt(groups - i);
            int t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        int[] sample = Arrays.copyOf(all, n);
        Arrays.sort(sample);
        return sample;
    }

    /** The ids of the sampled groups, as {@link CounterGroups#groupId} spells them. */
    static java.util.List<String> ids(int[] sample) {
        return Arrays.stream(sample).mapToObj(CounterGroups::groupId).toList();
    }
}
