package io.wheelraft.timer.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * (a) Schedule+cancel churn in the election-timer reset pattern: each operation schedules a
 * timeout 1 s out and cancels the one the same thread scheduled before, while {@code pending}
 * other timeouts sit in the timer (30..90 s out, so none fires during the run).
 * One operation = one schedule + one cancel.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// AlwaysPreTouch: without it the first seconds of each fork pay a page fault per fresh 4 KiB of
// eden (at ~2 GB/s of allocation), which made early iterations 5-10x slower than later ones.
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g", "-Xms3g", "-XX:+AlwaysPreTouch"})
public class ChurnBenchmark {

    private static final long ELECTION_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    @Param({"wheelraft-hashed", "wheelraft-hierarchical", "netty-hashed", "kafka-system", "jdk-stpe"})
    public String timer;

    @Param({"0", "100000", "1000000"})
    public int pending;

    private BenchTimer bench;

    @Setup(Level.Trial)
    public void setUp() {
        bench = BenchTimer.create(timer);
        SplittableRandom random = new SplittableRandom(42);
        long min = TimeUnit.SECONDS.toNanos(30);
        long spread = TimeUnit.SECONDS.toNanos(60);
        for (int i = 0; i < pending; i++) {
            bench.scheduleNoop(min + random.nextLong(spread));
        }
        if (pending > 0) {
            System.gc(); // the pending timeouts are long-lived: measure with them promoted
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bench.close();
    }

    /** The timeout this benchmark thread armed last (its "election timer"). */
    @State(Scope.Thread)
    public static class ElectionTimer {
        Object armed;
    }

    @Benchmark
    @Threads(1)
    public Object reset1Thread(ElectionTimer election) {
        return reset(election);
    }

    @Benchmark
    @Threads(2)
    public Object reset2Threads(ElectionTimer election) {
        return reset(election);
    }

    private Object reset(ElectionTimer election) {
        Object next = bench.scheduleNoop(ELECTION_DELAY_NANOS);
        Object previous = election.armed;
        if (previous != null) {
            bench.cancel(previous);
        }
        election.armed = next;
        return next;
    }
}
