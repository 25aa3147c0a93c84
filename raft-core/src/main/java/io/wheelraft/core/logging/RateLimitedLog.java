package io.wheelraft.core.logging;

import org.slf4j.Logger;

import java.util.Arrays;
import java.util.Objects;

/**
 * One log site that repeats a condition (a pre-vote every retry while the majority is down, a
 * connection that keeps breaking) without flooding the log: the first line is written, further
 * lines within {@code intervalMs} of the last written one are only counted, and the next line
 * written after the interval says how many were held back, e.g.
 * {@code "n1 starts pre-vote for term 7 (12 similar lines suppressed since the previous one)"}.
 *
 * <p>The caller passes the current time (milliseconds of any monotonic clock, e.g. a node's
 * manual clock in the simulation), so the rule is deterministic in tests and the pure Raft core
 * needs no clock of its own. Use one instance per site (or per site and subject, e.g. per peer).
 *
 * <p>Thread-safe: the check-and-count is synchronized; the slf4j call happens outside the lock.
 */
public final class RateLimitedLog {

    /** The default: at most one line per site every 10 s. */
    public static final long DEFAULT_INTERVAL_MS = 10_000;

    /** Where written lines go; the production sink is an slf4j logger. */
    public interface Sink {
        void write(boolean warn, String format, Object[] args);
    }

    private final Sink sink;
    private final long intervalMs;
    private boolean written;
    private long lastWrittenMs;
    private long suppressed;

    public RateLimitedLog(Logger logger, long intervalMs) {
        this(toSink(Objects.requireNonNull(logger, "logger")), intervalMs);
    }

    public RateLimitedLog(Sink sink, long intervalMs) {
        if (intervalMs <= 0) {
            throw new IllegalArgumentException("intervalMs must be positive, was " + intervalMs);
        }
        this.sink = Objects.requireNonNull(sink, "sink");
        this.intervalMs = intervalMs;
    }

    private static Sink toSink(Logger logger) {
        return (warn, format, args) -> {
            if (warn) {
                logger.warn(format, args);
            } else if (logger.isInfoEnabled()) {
                logger.info(format, args);
            }
        };
    }

    /** Logs at INFO unless a line of this site was written less than the interval ago; returns whether it was written. */
    public boolean info(long nowMs, String format, Object... args) {
        return log(false, nowMs, format, args);
    }

    /** Logs at WARN unless a line of this site was written less than the interval ago; returns whether it was written. */
    public boolean warn(long nowMs, String format, Object... args) {
        return log(true, nowMs, format, args);
    }

    /** Lines held back since the last written one. */
    public synchronized long suppressed() {
        return suppressed;
    }

    private boolean log(boolean warn, long nowMs, String format, Object[] args) {
        long heldBack;
        synchronized (this) {
            if (written && nowMs - lastWrittenMs < intervalMs) {
                suppressed++;
                return false;
            }
            heldBack = suppressed;
            suppressed = 0;
            written = true;
            lastWrittenMs = nowMs;
        }
        if (heldBack == 0) {
            sink.write(warn, format, args);
        } else {
            // The count goes in as one more argument so that a trailing Throwable stays last for slf4j.
            int at = args.length;
            if (at > 0 && args[at - 1] instanceof Throwable) {
                at--;
            }
            Object[] withCount = Arrays.copyOf(args, args.length + 1);
            System.arraycopy(args, at, withCount, at + 1, args.length - at);
            withCount[at] = heldBack;
            sink.write(warn, format + " ({} similar lines suppressed since the previous one)", withCount);
        }
        return true;
    }
}
