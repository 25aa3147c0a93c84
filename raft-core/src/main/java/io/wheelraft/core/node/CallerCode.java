package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;
import io.wheelraft.core.logging.RateLimitedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * Runs a caller's own code (the closure given to {@code apply}, {@code readIndex}, a leader
 * transfer or a membership change) from inside the node's work. What it throws is the caller's
 * bug: it is logged (one line, at most one every 10 s) and otherwise ignored, so it never cuts
 * short the work around it (the rest of a Ready batch, the other callers being failed).
 * Thread-safe.
 */
final class CallerCode {

    private static final Logger LOG = LoggerFactory.getLogger(CallerCode.class);
    private static final RateLimitedLog THREW = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private CallerCode() {
    }

    /** Runs {@code done} with {@code status}, unless it is null. */
    static void complete(Closure done, Status status) {
        if (done != null) {
            run(() -> done.run(status));
        }
    }

    /** Runs {@code code}, a caller's closure or what calls one. */
    static void run(Runnable code) {
        try {
            code.run();
        } catch (RuntimeException e) {
            THREW.warn(TimeUnit.NANOSECONDS.toMillis(System.nanoTime()),
                    "a caller's closure threw {} (ignored; the node carries on): fix the closure", e.toString());
        }
    }
}
