package io.wheelraft.timer.bench;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * (c) CPU burnt by an idle timer: one timeout 60 s out, nothing else, for 10 s. Measures the
 * CPU time (ThreadMXBean) of the threads the timer created, and the whole process's CPU time
 * (com.sun.management.OperatingSystemMXBean) over the same window.
 *
 * <p>Usage: {@code java -cp raft-timer-benchmarks.jar io.wheelraft.timer.bench.IdleCpuHarness [runs] [seconds] [kinds...]}
 */
public final class IdleCpuHarness {

    private IdleCpuHarness() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        List<String> kinds = args.length > 2 ? Arrays.asList(args).subList(2, args.length) : BenchTimer.KINDS;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.printf("%-24s %4s %18s %18s%n", "timer", "run", "timer threads ms", "process ms");
        for (int run = 1; run <= runs; run++) {
            for (String kind : kinds) {
                NewThreads before = NewThreads.since();
                try (BenchTimer timer = BenchTimer.create(kind)) {
                    timer.scheduleNoop(TimeUnit.SECONDS.toNanos(60));
                    Thread.sleep(500); // let the worker start and settle
                    long[] created = before.started();
                    long threadCpu0 = NewThreads.cpuNanos(created);
                    long processCpu0 = os.getProcessCpuTime();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
                    long threadCpu = NewThreads.cpuNanos(created) - threadCpu0;
                    long processCpu = os.getProcessCpuTime() - processCpu0;
                    System.out.printf("%-24s %4d %18.1f %18.1f%n", kind, run, threadCpu / 1e6, processCpu / 1e6);
                }
            }
        }
    }
}
