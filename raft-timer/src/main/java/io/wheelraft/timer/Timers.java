package io.wheelraft.timer;

import java.util.concurrent.TimeUnit;

/**
 * The process-wide timer that every Raft node's {@link RepeatedTimer}s share, so a process
 * hosting many Raft groups still runs one timer thread.
 *
 * <p>It is a {@link HashedWheelTimer} with a 1 ms tick and 2048 ticks per wheel (one revolution
 * is about 2 s, so typical election timeouts land within a revolution) whose worker is a daemon
 * thread named {@code wheelraft-timer}. The worker parks while nothing is due, so a fine tick
 * costs no idle CPU. Tasks run on the worker and must not block. Callers never stop it; its
 * {@code stop()} throws.
 *
 * <p>Thread-safety: {@link #shared()} may be called from any thread; the timer is created once,
 * lazily.
 */
public final class Timers {

    private Timers() {
    }

    /** The shared timer, created on first use. */
    public static Timer shared() {
        return Holder.SHARED;
    }

    /** What the shared timer has done (pending, fired, lateness), for monitoring; creates the timer if needed. */
    public static TimerStats sharedStats() {
        return Holder.WHEEL.stats();
    }

    private static final class Holder {
        static final HashedWheelTimer WHEEL = HashedWheelTimer.builder()
                .tickDuration(1, TimeUnit.MILLISECONDS)
                .ticksPerWheel(2048)
                .threadFactory(r -> {
                    Thread t = new Thread(r, "wheelraft-timer");
                    t.setDaemon(true);
                    return t;
                })
                .build();
        static final Timer SHARED = new Unstoppable(WHEEL);
    }

    /** Guards the shared timer against a caller stopping it for everyone. */
    private record Unstoppable(Timer delegate) implements Timer {
        @Override
        public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
            return delegate.newTimeout(task, delay, unit);
        }

        @Override
        public java.util.Set<Timeout> stop() {
            throw new UnsupportedOperationException("the shared timer is never stopped");
        }

        @Override
        public Clock clock() {
            return delegate.clock();
        }
    }
}
