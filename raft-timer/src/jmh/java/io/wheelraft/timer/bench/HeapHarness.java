package io.wheelraft.timer.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * (d) Heap bytes per pending timeout: used heap after full GCs, before and after scheduling
 * 1,000,000 timeouts an hour out, divided by the count. Where the API allows, all timeouts
 * share one task object, so the figure is the timer's own cost per timeout (Kafka's API needs
 * one TimerTask object per timeout, so its figure includes that object). The benchmark keeps
 * no handles of its own.
 *
 * <p>Usage: {@code java -Xmx2g -XX:+UseSerialGC -cp raft-timer-benchmarks.jar io.wheelraft.timer.bench.HeapHarness [runs] [kinds...]}
 */
public final class HeapHarness {

    private static final int COUNT = 1_000_000;

    private HeapHarness() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        List<String> kinds = args.length > 1 ? Arrays.asList(args).subList(1, args.length) : BenchTimer.KINDS;
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.out.printf("%-24s %4s %16s%n", "timer", "run", "bytes/timeout");
        for (int run = 1; run <= runs; run++) {
            for (String kind : kinds) {
                long before = usedAfterGc(memory);
                try (BenchTimer timer = BenchTimer.create(kind)) {
                    long hour = TimeUnit.HOURS.toNanos(1);
                    for (int i = 0; i < COUNT; i++) {
                        timer.scheduleNoop(hour + i * 1000L);
                    }
                    Thread.sleep(1000); // Netty moves new timeouts from its queue to buckets 100k per tick
                    long after = usedAfterGc(memory);
                    System.out.printf("%-24s %4d %16.1f%n", kind, run, (after - before) / (double) COUNT);
                }
            }
        }
    }

    private static long usedAfterGc(MemoryMXBean memory) throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
