package io.wheelraft.timer;

/**
 * A monotonic time source. Production code uses {@link #system()}; tests use a manual clock
 * (see {@code ManualClock}, given to a timer's {@code drivenBy}) whose {@code advance} fires due
 * timeouts on the calling thread, so a whole cluster runs deterministically with no sleeps.
 */
public interface Clock {

    /** Monotonic nanoseconds; only differences between two readings are meaningful. */
    long nanoTime();

    /** Monotonic milliseconds, derived from {@link #nanoTime()}. */
    default long millis() {
        return nanoTime() / 1_000_000L;
    }

    /** The JVM's monotonic clock ({@link System#nanoTime()}). */
    static Clock system() {
        return System::nanoTime;
    }
}
