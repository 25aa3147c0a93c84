package io.wheelraft.timer.bench;

/**
 * What one {@code System.nanoTime()} costs on this machine. Every timer compared here reads the
 * clock once per schedule, so this is a floor under the churn benchmark's cost per operation.
 *
 * <p>Usage: {@code java -cp raft-timer-benchmarks.jar io.wheelraft.timer.bench.ClockCostHarness}
 */
public final class ClockCostHarness {

    private static volatile long sink;

    private ClockCostHarness() {
    }

    public static void main(String[] args) {
        long n = 50_000_000L;
        for (int run = 1; run <= 5; run++) {
            long sum = 0;
            long start = System.nanoTime();
            for (long i = 0; i < n; i++) {
                sum += System.nanoTime();
            }
            long elapsed = System.nanoTime() - start;
            sink = sum;
            System.out.printf("run %d: System.nanoTime() %.1f ns per call%n", run, elapsed / (double) n);
        }
    }
}
