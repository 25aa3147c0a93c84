package io.wheelraft.timer.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * (a) again, made robust to a machine whose load drifts: the same election-reset churn as
 * {@link ChurnBenchmark}, but the timers take turns in short rounds (order rotated each round),
 * so every timer sees the same background load, and each round yields a paired ratio
 * wheelraft-hashed / netty-hashed. Prints per timer the median and range of ops/s over the
 * rounds, and the median and range of the paired ratio.
 *
 * <p>Usage: {@code java -cp raft-timer-benchmarks.jar io.wheelraft.timer.bench.InterleavedChurnHarness [rounds] [measureMs] [threads,...] [kinds...]};
 * {@code -Dpending=0,100000,1000000} (the default) chooses the numbers of other pending timeouts.
 * Run it with {@code -Xms} equal to {@code -Xmx} and {@code -XX:+AlwaysPreTouch}: otherwise the
 * first passes through a growing heap pay page faults (about 2 GB/s of fresh memory at these
 * allocation rates), and which timer happens to pay them decides the early rounds.
 */
public final class InterleavedChurnHarness {

    private InterleavedChurnHarness() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        int measureMs = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int warmupRounds = 2;
        int[] threadCounts = args.length > 2
                ? Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray() : new int[] {1, 2};
        List<String> kinds = args.length > 3 ? Arrays.asList(args).subList(3, args.length) : BenchTimer.KINDS;
        int[] pendings = Arrays.stream(System.getProperty("pending", "0,100000,1000000").split(","))
                .mapToInt(Integer::parseInt).toArray();
        for (int threads : threadCounts) {
            for (int pending : pendings) {
                Map<String, List<Double>> results = new HashMap<>();
                List<Double> ratios = new ArrayList<>();
                for (int round = 0; round < warmupRounds + rounds; round++) {
                    Map<String, Double> thisRound = new HashMap<>();
                    List<String> order = new ArrayList<>(kinds);
                    java.util.Collections.rotate(order, round);
                    for (String kind : order) {
                        thisRound.put(kind, measure(kind, threads, pending, measureMs));
                    }
                    if (round >= warmupRounds) {
                        thisRound.forEach((k, v) -> results.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
                        ratios.add(thisRound.get("wheelraft-hashed") / thisRound.get("netty-hashed"));
                    }
                }
                System.out.printf("threads=%d pending=%,d (%d rounds of %d ms)%n", threads, pending, rounds, measureMs);
                for (String kind : kinds) {
                    double[] v = results.get(kind).stream().mapToDouble(Double::doubleValue).sorted().toArray();
                    System.out.printf("  %-24s median %6.1f Mops/s  [%5.1f – %5.1f]%n", kind, median(v) / 1e6, v[0] / 1e6,
                            v[v.length - 1] / 1e6);
                }
                double[] r = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
                System.out.printf("  paired ratio wheelraft-hashed / netty-hashed: median %.2f  [%.2f – %.2f]%n",
                        median(r), r[0], r[r.length - 1]);
            }
        }
    }

    private static double measure(String kind, int threads, int pending, int measureMs) throws InterruptedException {
        try (BenchTimer timer = BenchTimer.create(kind)) {
            SplittableRandom random = new SplittableRandom(42);
            for (int i = 0; i < pending; i++) {
                timer.scheduleNoop(TimeUnit.SECONDS.toNanos(30) + random.nextLong(TimeUnit.SECONDS.toNanos(60)));
            }
            if (pending > 0) {
                System.gc(); // the pending timeouts are long-lived: measure with them promoted, as in a real process
            }
            AtomicBoolean measuring = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            LongAdder ops = new LongAdder();
            CountDownLatch done = new CountDownLatch(threads);
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    Object armed = null;
                    long local = 0;
                    long delay = TimeUnit.SECONDS.toNanos(1);
                    while (!stop.get()) {
                        for (int i = 0; i < 256; i++) {
                            Object next = timer.scheduleNoop(delay);
                            if (armed != null) {
                                timer.cancel(armed);
                            }
                            armed = next;
                        }
                        if (measuring.get()) {
                            local += 256;
                        }
                    }
                    ops.add(local);
                    done.countDown();
                });
                th.setDaemon(true);
                th.start();
            }
            Thread.sleep(150); // warm-up inside the round
            measuring.set(true);
            long start = System.nanoTime();
            Thread.sleep(measureMs);
            measuring.set(false);
            long elapsed = System.nanoTime() - start;
            stop.set(true);
            done.await();
            return ops.sum() / (elapsed / 1e9);
        }
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

}
