package io.wheelraft.timer.bench;

import io.wheelraft.timer.HashedWheelTimer;
import io.wheelraft.timer.HierarchicalWheelTimer;
import io.wheelraft.timer.Timeout;
import io.wheelraft.timer.TimerTask;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.server.util.timer.SystemTimer;

/**
 * One face over the five timers compared side by side, so every benchmark drives them the same
 * way. All are configured with a 1 ms tick where they have one. Not thread-safe to create;
 * {@link #schedule} and {@link #cancel} are as thread-safe as the timer behind them.
 */
public abstract class BenchTimer implements AutoCloseable {

    /** Every implementation, in report order. */
    public static final List<String> KINDS =
            List.of("wheelraft-hashed", "wheelraft-hierarchical", "netty-hashed", "kafka-system", "jdk-stpe");

    /** Round-based wheels use the same wheel size so that their bucket structures match. */
    static final int TICKS_PER_WHEEL = 512;

    /** The name printed in reports. */
    public abstract String name();

    /** Schedules a task that does nothing (shared where the API allows); returns the handle. */
    public abstract Object scheduleNoop(long delayNanos);

    /** Schedules {@code task}; returns the handle. */
    public abstract Object schedule(Runnable task, long delayNanos);

    /** Cancels a handle returned by a schedule method. */
    public abstract void cancel(Object handle);

    @Override
    public abstract void close();

    static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Creates the timer named {@code kind} (one of {@link #KINDS}). */
    public static BenchTimer create(String kind) {
        return switch (kind) {
            case "wheelraft-hashed" -> new WheelRaft(kind, HashedWheelTimer.builder()
                    .tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(TICKS_PER_WHEEL)
                    .threadFactory(daemon("bench-wheelraft-hashed")).build());
            case "wheelraft-hierarchical" -> new WheelRaft(kind, HierarchicalWheelTimer.builder()
                    .tickDuration(1, TimeUnit.MILLISECONDS).threadFactory(daemon("bench-wheelraft-hierarchical")).build());
            case "netty-hashed" -> new Netty();
            case "kafka-system" -> new Kafka();
            case "jdk-stpe" -> new Jdk();
            default -> throw new IllegalArgumentException("unknown timer kind: " + kind + " (expected one of " + KINDS + ")");
        };
    }

    private static final class WheelRaft extends BenchTimer {
        private static final TimerTask NOOP = t -> { };
        private final String name;
        private final io.wheelraft.timer.Timer timer;

        WheelRaft(String name, io.wheelraft.timer.Timer timer) {
            this.name = name;
            this.timer = timer;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Object scheduleNoop(long delayNanos) {
            return timer.newTimeout(NOOP, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public Object schedule(Runnable task, long delayNanos) {
            return timer.newTimeout(t -> task.run(), delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void cancel(Object handle) {
            ((Timeout) handle).cancel();
        }

        @Override
        public void close() {
            timer.stop();
        }
    }

    private static final class Netty extends BenchTimer {
        private static final io.netty.util.TimerTask NOOP = t -> { };
        private final io.netty.util.HashedWheelTimer timer = new io.netty.util.HashedWheelTimer(
                daemon("bench-netty-hashed"), 1, TimeUnit.MILLISECONDS, TICKS_PER_WHEEL);

        @Override
        public String name() {
            return "netty-hashed";
        }

        @Override
        public Object scheduleNoop(long delayNanos) {
            return timer.newTimeout(NOOP, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public Object schedule(Runnable task, long delayNanos) {
            return timer.newTimeout(t -> task.run(), delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void cancel(Object handle) {
            ((io.netty.util.Timeout) handle).cancel();
        }

        @Override
        public void close() {
            timer.stop();
        }
    }

    /** Kafka's SystemTimer needs a reaper thread calling advanceClock, as Kafka's purgatories do. */
    private static final class Kafka extends BenchTimer {
        private final SystemTimer timer = new SystemTimer("bench-kafka"); // 1 ms tick, 20 slots, Time.SYSTEM.hiResClockMs()
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread reaper;

        Kafka() {
            reaper = daemon("bench-kafka-reaper").newThread(() -> {
                while (running.get()) {
                    try {
                        timer.advanceClock(200L);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            reaper.start();
        }

        private static final class Task extends org.apache.kafka.server.util.timer.TimerTask {
            private final Runnable body;

            Task(long delayMs, Runnable body) {
                super(delayMs);
                this.body = body;
            }

            @Override
            public void run() {
                if (body != null) {
                    body.run();
                }
            }
        }

        @Override
        public String name() {
            return "kafka-system";
        }

        @Override
        public Object scheduleNoop(long delayNanos) {
            Task t = new Task(TimeUnit.NANOSECONDS.toMillis(delayNanos), null);
            timer.add(t);
            return t;
        }

        @Override
        public Object schedule(Runnable task, long delayNanos) {
            Task t = new Task(TimeUnit.NANOSECONDS.toMillis(delayNanos), task);
            timer.add(t);
            return t;
        }

        @Override
        public void cancel(Object handle) {
            ((Task) handle).cancel();
        }

        @Override
        public void close() {
            running.set(false);
            try {
                reaper.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            timer.close();
        }
    }

    /** The JDK's scheduler, with remove-on-cancel so that cancelled tasks do not pile up. */
    private static final class Jdk extends BenchTimer {
        private static final Runnable NOOP = () -> { };
        private final ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, daemon("bench-jdk-stpe"));

        Jdk() {
            pool.setRemoveOnCancelPolicy(true);
        }

        @Override
        public String name() {
            return "jdk-stpe";
        }

        @Override
        public Object scheduleNoop(long delayNanos) {
            return pool.schedule(NOOP, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public Object schedule(Runnable task, long delayNanos) {
            return pool.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void cancel(Object handle) {
            ((ScheduledFuture<?>) handle).cancel(false);
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }
}
