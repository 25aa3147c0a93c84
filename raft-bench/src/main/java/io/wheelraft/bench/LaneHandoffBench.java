package io.wheelraft.bench;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.EventTranslatorOneArg;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.wheelraft.core.node.SerialLane;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Thread hand-off A/B: N producer threads give tasks to one consumer through (a) the engine's
 * {@link SerialLane} on a two-thread pool, (b) an {@link ArrayBlockingQueue} drained by its own
 * thread, (c) an LMAX Disruptor with {@link BlockingWaitStrategy}. Every system runs the same
 * task object (a Runnable that records its hand-off latency), so the queue is the only
 * difference. Reports throughput, hand-off latency p50/p99 and process CPU per task.
 *
 * <p>Patterns: {@code trickle} (each producer: one task, then 10 ms idle), {@code burst} (each
 * producer: 8 tasks, then 1 ms idle, the way a lane receives a Raft message's work) and
 * {@code flat} (as fast as possible, at most {@value #WINDOW} tasks in flight in every system).
 * The systems are interleaved within each point and the order is reversed in the second round,
 * so background load on a shared machine falls on all of them alike.
 *
 * <p>Run from the command line only; single-threaded driver, not reusable.
 */
public final class LaneHandoffBench {

    private static final int WINDOW = 1024;
    private static final int RING = 1024;

    private enum Pattern {
        TRICKLE(1, 10_000_000L), BURST(8, 1_000_000L), FLAT(0, 0L);

        final int burst;
        final long idleNanos;

        Pattern(int burst, long idleNanos) {
            this.burst = burst;
            this.idleNanos = idleNanos;
        }
    }

    /** One hand-off mechanism with one consumer thread (or lane) behind it. */
    private interface Handoff extends AutoCloseable {
        void submit(Runnable task) throws InterruptedException;

        @Override
        void close() throws InterruptedException;
    }

    /** What the consumer side measured; written by the single consumer, read after a quiet point. */
    private static final class Sink {
        final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        volatile boolean recording;
        long count;
        Semaphore window;
    }

    /** The task every system runs: records how long it waited between submit and run. */
    private static final class Task implements Runnable {
        final long submitted = System.nanoTime();
        final Sink sink;

        Task(Sink sink) {
            this.sink = sink;
        }

        @Override
        public void run() {
            long waited = System.nanoTime() - submitted;
            Sink s = sink;
            if (s.recording) {
                s.latency.recordValue(waited);
                s.count++;
            }
            if (s.window != null) {
                s.window.release();
            }
        }
    }

    @SuppressWarnings("unchecked") // handleEventsWith's generic varargs, one handler
    private static Handoff open(String system) {
        switch (system) {
            case "lane": {
                ExecutorService pool = Executors.newFixedThreadPool(2, daemon("bench-lane"));
                SerialLane lane = new SerialLane("bench", pool);
                return new Handoff() {
                    public void submit(Runnable task) {
                        lane.execute(task);
                    }

                    public void close() throws InterruptedException {
                        pool.shutdown();
                        pool.awaitTermination(5, TimeUnit.SECONDS);
                    }
                };
            }
            case "abq": {
                BlockingQueue<Runnable> queue = new ArrayBlockingQueue<>(RING);
                AtomicBoolean running = new AtomicBoolean(true);
                Thread consumer = daemon("bench-abq").newThread(() -> {
                    try {
                        while (running.get() || !queue.isEmpty()) {
                            Runnable r = queue.poll(100, TimeUnit.MILLISECONDS);
                            if (r != null) {
                                r.run();
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                consumer.start();
                return new Handoff() {
                    public void submit(Runnable task) throws InterruptedException {
                        queue.put(task);
                    }

                    public void close() throws InterruptedException {
                        running.set(false);
                        consumer.join(5000);
                    }
                };
            }
            case "disruptor": {
                // MULTI: an engine lane is fed by several threads (transport, timer, disk) even
                // when one producer is measured here.
                Disruptor<Slot> d = new Disruptor<>(Slot::new, RING, daemon("bench-disruptor"),
                        ProducerType.MULTI, new BlockingWaitStrategy());
                d.handleEventsWith((slot, seq, endOfBatch) -> {
                    Runnable r = slot.task;
                    slot.task = null;
                    r.run();
                });
                RingBuffer<Slot> ring = d.start();
                EventTranslatorOneArg<Slot, Runnable> put = (slot, seq, task) -> slot.task = task;
                return new Handoff() {
                    public void submit(Runnable task) {
                        ring.publishEvent(put, task);
                    }

                    public void close() {
                        d.shutdown();
                    }
                };
            }
            default:
                throw new IllegalArgumentException("unknown system " + system + ": use lane, abq or disruptor");
        }
    }

    /** A ring slot holding the task handed over. */
    private static final class Slot {
        Runnable task;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Accumulates one configuration over the rounds. */
    private static final class Totals {
        final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        long ops;
        long wallNanos;
        long cpuNanos;
        long threadCpuNanos;
        long consumerCpuNanos;
    }

    private static void runPoint(String system, Pattern pattern, int producers, double warmupSec,
                                 double measureSec, Totals totals) throws Exception {
        Sink sink = new Sink();
        if (pattern == Pattern.FLAT) {
            sink.window = new Semaphore(WINDOW);
        }
        AtomicBoolean stop = new AtomicBoolean();
        long wall;
        long cpu;
        long[] threadCpu;
        try (Handoff handoff = open(system)) {
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                Thread t = new Thread(() -> produce(handoff, sink, pattern, stop), "bench-producer-" + p);
                t.setDaemon(true);
                threads.add(t);
            }
            threads.forEach(Thread::start);
            sleep(warmupSec);
            long cpu0 = processCpuNanos();
            long[] threadCpu0 = threadCpuNanos();
            long t0 = System.nanoTime();
            sink.recording = true;
            sleep(measureSec);
            sink.recording = false;
            wall = System.nanoTime() - t0;
            cpu = processCpuNanos() - cpu0;
            long[] threadCpu1 = threadCpuNanos();
            threadCpu = new long[] {threadCpu1[0] - threadCpu0[0], threadCpu1[1] - threadCpu0[1]};
            stop.set(true);
            for (Thread t : threads) {
                t.join(5000);
            }
        }
        // close() waited for the consumer to finish, so its plain fields are safe to read here.
        totals.latency.add(sink.latency);
        totals.ops += sink.count;
        totals.wallNanos += wall;
        totals.cpuNanos += cpu;
        totals.threadCpuNanos += threadCpu[0];
        totals.consumerCpuNanos += threadCpu[1];
    }

    private static void produce(Handoff handoff, Sink sink, Pattern pattern, AtomicBoolean stop) {
        try {
            if (pattern == Pattern.FLAT) {
                while (!stop.get()) {
                    sink.window.acquire();
                    handoff.submit(new Task(sink));
                }
                return;
            }
            // Fixed schedule: the next burst is due one period after the previous one was due,
            // so a slow hand-off does not lower the offered rate.
            long next = System.nanoTime();
            while (!stop.get()) {
                for (int i = 0; i < pattern.burst; i++) {
                    handoff.submit(new Task(sink));
                }
                next += pattern.idleNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * CPU time of every live Java thread and of the consumer side alone (pool, queue or ring
     * threads), in nanoseconds: per-thread clocks, finer than the process figure's 10 ms ticks,
     * which matters at 100 tasks a second. The threads of a point live through its measurement.
     */
    private static long[] threadCpuNanos() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long all = 0;
        long consumer = 0;
        for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long ns = mx.getThreadCpuTime(info.getThreadId());
            if (ns < 0) {
                continue;
            }
            all += ns;
            if (info.getThreadName().startsWith("bench-") && !info.getThreadName().startsWith("bench-producer")) {
                consumer += ns;
            }
        }
        return new long[] {all, consumer};
    }

    private static void sleep(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }

    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    public static void main(String[] args) throws Exception {
        double warmup = 0.5;
        double measure = 2.0;
        int rounds = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--warmup" -> warmup = Double.parseDouble(args[++i]);
                case "--measure" -> measure = Double.parseDouble(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown option " + args[i] + ": use --warmup S --measure S --rounds N");
                    System.exit(2);
                }
            }
        }
        String disruptorJar = String.valueOf(RingBuffer.class.getProtectionDomain().getCodeSource().getLocation());
        if (!disruptorJar.contains("disruptor-4.")) {
            System.err.println("Disruptor on the class path is " + disruptorJar
                    + ", not 4.x: put raft-bench/target/disruptor4/* first on the class path (see docs/benchmarks.md)");
            System.exit(2);
        }
        String[] systems = {"lane", "abq", "disruptor"};
        int[] producerCounts = {1, 4};
        System.out.printf(Locale.ROOT, "# %s; cores %d; load average %.2f at start%n", disruptorJar,
                Runtime.getRuntime().availableProcessors(), loadAverage());
        // JIT warm-up of every system's path before anything is measured.
        for (String s : systems) {
            runPoint(s, Pattern.FLAT, 4, 1.0, 0.1, new Totals());
        }
        Totals[][][] totals = new Totals[Pattern.values().length][producerCounts.length][systems.length];
        for (int round = 0; round < rounds; round++) {
            for (Pattern pattern : Pattern.values()) {
                for (int pi = 0; pi < producerCounts.length; pi++) {
                    for (int k = 0; k < systems.length; k++) {
                        int si = round % 2 == 0 ? k : systems.length - 1 - k;
                        Totals t = totals[pattern.ordinal()][pi][si];
                        if (t == null) {
                            t = totals[pattern.ordinal()][pi][si] = new Totals();
                        }
                        runPoint(systems[si], pattern, producerCounts[pi], warmup, measure, t);
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "# load average %.2f at end; %d rounds of %.1f s measured after %.1f s warm-up%n",
                loadAverage(), rounds, measure, warmup);
        System.out.println("| pattern | producers | system | ops/s | p50 (us) | p99 (us) | CPU per op, all threads (us) | consumer CPU (% of a core) | process CPU (% of a core) |");
        System.out.println("|---|---:|---|---:|---:|---:|---:|---:|---:|");
        for (Pattern pattern : Pattern.values()) {
            for (int pi = 0; pi < producerCounts.length; pi++) {
                for (int si = 0; si < systems.length; si++) {
                    Totals t = totals[pattern.ordinal()][pi][si];
                    double secs = t.wallNanos / 1e9;
                    System.out.printf(Locale.ROOT, "| %s | %d | %s | %,.0f | %.1f | %.1f | %.2f | %.1f | %.0f |%n",
                            pattern.name().toLowerCase(Locale.ROOT), producerCounts[pi], systems[si],
                            t.ops / secs,
                            t.latency.getValueAtPercentile(50) / 1e3,
                            t.latency.getValueAtPercentile(99) / 1e3,
                            t.ops == 0 ? 0.0 : t.threadCpuNanos / 1e3 / t.ops,
                            100.0 * t.consumerCpuNanos / t.wallNanos,
                            100.0 * t.cpuNanos / t.wallNanos);
                }
            }
        }
    }
}
