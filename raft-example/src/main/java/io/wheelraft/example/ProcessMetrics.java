package io.wheelraft.example;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.wheelraft.timer.TimerStats;

import java.util.concurrent.TimeUnit;

/**
 * Registers what an operator wants next to the Raft meters: the JVM's (heap and other memory
 * pools, GC pauses, threads, classes), the process's (CPU, uptime, open files) and the shared
 * timer wheel's ({@code wheelraft.timer.*}: pending timeouts, timeouts fired, and how late they
 * fired, the first sign of a stalled JVM before elections start).
 *
 * <p>Call once per registry. The JVM GC binder keeps JMX listeners: {@link #close} removes them.
 * Thread-safe as Micrometer is: meters are read on the scraping thread.
 */
final class ProcessMetrics implements AutoCloseable {

    private final JvmGcMetrics gc = new JvmGcMetrics();

    private ProcessMetrics() {
    }

    /** Binds the JVM, process and timer meters to {@code registry}. */
    static ProcessMetrics bind(MeterRegistry registry, TimerStats timer) {
        ProcessMetrics m = new ProcessMetrics();
        new JvmMemoryMetrics().bindTo(registry);
        m.gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        bindTimer(registry, timer);
        return m;
    }

    static void bindTimer(MeterRegistry registry, TimerStats timer) {
        Gauge.builder("wheelraft.timer.pending", timer, TimerStats::pendingTimeouts)
                .description("timeouts scheduled on the shared timer wheel that have neither fired nor been cancelled")
                .register(registry);
        FunctionCounter.builder("wheelraft.timer.fired", timer, TimerStats::firedTimeouts)
                .description("timeouts the shared timer wheel fired")
                .register(registry);
        FunctionCounter.builder("wheelraft.timer.lateness.seconds", timer, t -> t.totalLatenessNanos() / 1e9)
                .description("sum of how late each timeout fired after its deadline (divide by fired for the mean)")
                .register(registry);
        Gauge.builder("wheelraft.timer.lateness.max.seconds", timer, t -> t.takeMaxLatenessNanos() / (double) TimeUnit.SECONDS.toNanos(1))
                .description("the largest lateness of a timeout fired since the previous scrape")
                .register(registry);
    }

    @Override
    public void close() {
        gc.close();
    }
}
