package io.wheelraft.timer.bench;

import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * (b) Firing lateness: 100,000 timeouts with deadlines spread uniformly over 2 s; lateness is
 * the time a task ran minus its deadline (System.nanoTime()). Prints p50/p99/max (and min,
 * which is negative for a timer that fires early) per timer and run, plus how long the 100,000
 * schedule calls took, the p99 of the timeouts due after that loop had finished, and the CPU
 * time the timer's own threads used from the first schedule to the last firing (ThreadMXBean).
 *
 * <p>Usage: {@code java -cp raft-timer-benchmarks.jar io.wheelraft.timer.bench.LatenessHarness [runs] [kinds...]}
 */
public final class LatenessHarness {

    private static final int COUNT = 100_000;
    private static final long SPREAD_NANOS = TimeUnit.SECONDS.toNanos(2);

    private LatenessHarness() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        List<String> kinds = args.length > 1 ? Arrays.asList(args).subList(1, args.length) : BenchTimer.KINDS;
        System.out.printf("%-24s %4s %10s %10s %10s %10s %12s %14s %14s%n", "timer", "run", "p50 ms", "p99 ms", "max ms",
                "min ms", "schedule ms", "p99 after ms", "timer CPU ms");
        for (int run = 1; run <= runs; run++) {
            for (String kind : kinds) {
                Result r = measure(kind, run);
                long[] lateness = r.lateness;
                Arrays.sort(lateness);
                long[] after = r.latenessAfterScheduling;
                Arrays.sort(after);
                System.out.printf("%-24s %4d %10.3f %10.3f %10.3f %10.3f %12.1f %14.3f %14.1f%n", kind, run,
                        ms(lateness[COUNT / 2]), ms(lateness[(int) (COUNT * 0.99)]), ms(lateness[COUNT - 1]), ms(lateness[0]),
                        ms(r.schedulingNanos), ms(after[(int) (after.length * 0.99)]), ms(r.timerCpuNanos));
            }
        }
    }

    /** Lateness of every timeout, and of those due after the scheduling loop had finished. */
    private record Result(long[] lateness, long[] latenessAfterScheduling, long schedulingNanos, long timerCpuNanos) {
    }

    private static Result measure(String kind, int seed) throws InterruptedException {
        NewThreads existing = NewThreads.since();
        try (BenchTimer timer = BenchTimer.create(kind)) {
            warmUp(timer);
            long[] timerThreads = existing.started();
            long cpu0 = NewThreads.cpuNanos(timerThreads);
            long[] deadline = new long[COUNT];
            long[] ran = new long[COUNT];
            CountDownLatch done = new CountDownLatch(COUNT);
            SplittableRandom random = new SplittableRandom(seed);
            long start = System.nanoTime();
            for (int i = 0; i < COUNT; i++) {
                int id = i;
                long delay = random.nextLong(SPREAD_NANOS);
                deadline[i] = System.nanoTime() + delay;
                timer.schedule(() -> {
                    ran[id] = System.nanoTime();
                    done.countDown();
                }, delay);
            }
            long scheduled = System.nanoTime();
            if (!done.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(kind + ": " + done.getCount() + " timeouts never fired");
            }
            long timerCpu = NewThreads.cpuNanos(timerThreads) - cpu0;
            long[] lateness = new long[COUNT];
            long[] after = new long[COUNT];
            int afterCount = 0;
            for (int i = 0; i < COUNT; i++) {
                lateness[i] = ran[i] - deadline[i];
                if (deadline[i] > scheduled) {
                    after[afterCount++] = lateness[i];
                }
            }
            return new Result(lateness, Arrays.copyOf(after, afterCount), scheduled - start, timerCpu);
        }
    }

    private static void warmUp(BenchTimer timer) throws InterruptedException {
        int n = 20_000;
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            timer.schedule(done::countDown, TimeUnit.MICROSECONDS.toNanos(i % 200_000));
        }
        done.await(30, TimeUnit.SECONDS);
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
