package io.wheelraft.example;

import java.util.Arrays;
import java.util.List;

/**
 * Nearest-rank percentiles of a list of measurements (NaN entries, meaning "not measured", are
 * ignored). Immutable.
 */
record Stats(int count, double min, double median, double p90, double p99, double max) {

    static Stats of(List<Double> values) {
        double[] v = values.stream().filter(d -> d != null && !d.isNaN()).mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 0) {
            return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        return new Stats(v.length, v[0], rank(v, 0.50), rank(v, 0.90), rank(v, 0.99), v[v.length - 1]);
    }

    /** The nearest-rank percentile of sorted values: the smallest value with at least {@code q} of them at or below it. */
    static double rank(double[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static long rank(long[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static double[] sorted(double... values) {
        double[] c = values.clone();
        Arrays.sort(c);
        return c;
    }
}
