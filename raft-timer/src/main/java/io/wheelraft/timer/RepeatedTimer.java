package io.wheelraft.timer;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task that runs {@link #onTrigger()} every {@code timeoutMs} (as adjusted by
 * {@link #adjustTimeout(int)}) on a {@link Timer} it is given, with SOFAJRaft's
 * {@code RepeatedTimer} semantics. It creates no thread: thousands of them share one wheel.
 *
 * <p>Life cycle: created stopped; {@link #start()} arms it; {@link #stop()} disarms it (also
 * from inside {@code onTrigger}, which prevents the next run); {@link #restart()} re-arms it
 * with a fresh timeout; {@link #reset(int)} changes the period and re-arms it if running;
 * {@link #destroy()} stops it for good and calls {@link #onDestroy()} exactly once, after any
 * run in progress has finished.
 *
 * <p>Thread-safety: every method may be called from any thread, including from inside
 * {@code onTrigger}. {@code onTrigger} runs on the thread the timer fires on (or the caller's,
 * for {@link #runOnceNow()}), never under this object's lock, and must not block. It never
 * overlaps itself: a fire (or {@code runOnceNow}) while it runs makes it run once more right
 * after, on the same thread, instead of concurrently. After
 * {@code stop}, {@code reset}, {@code restart} or {@code destroy} returns, no run scheduled
 * before it will start {@code onTrigger}; a run already inside {@code onTrigger} finishes.
 * An exception from {@code onTrigger} is logged and the timer keeps repeating.
 */
public abstract class RepeatedTimer {

    private static final Logger LOG = LoggerFactory.getLogger(RepeatedTimer.class);

    private final String name;
    private final Timer timer;
    /** A plain monitor: a process hosting many groups keeps several timers per group, and an idle one costs no lock object beyond this. */
    private final Object lock = new Object();
    private final TimerTask fireTask = this::onTimeout;

    // Guarded by lock.
    private int timeoutMs;
    private boolean stopped = true;
    private boolean destroyed;
    private boolean destroyNotified;
    /** True while onTrigger runs; a fire meanwhile sets {@link #rerun} instead of overlapping. */
    private boolean triggering;
    private boolean rerun;
    /** The armed timeout; null when disarmed or while a run is between firing and re-arming. */
    private Timeout timeout;

    /**
     * @param name a name for logs
     * @param timeoutMs the period in milliseconds (> 0), before {@link #adjustTimeout}
     * @param timer the timer to schedule on; this class never stops it
     */
    protected RepeatedTimer(String name, int timeoutMs, Timer timer) {
        this.name = Objects.requireNonNull(name, "name");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.timeoutMs = checkTimeout(timeoutMs);
    }

    /** The work to do on every expiry. Must not block; exceptions are logged. */
    protected abstract void onTrigger();

    /**
     * Returns the delay to use for the next run, given the configured period. Election timers
     * override this to randomise. Called under this object's lock: do not call back into it.
     */
    protected int adjustTimeout(int timeoutMs) {
        return timeoutMs;
    }

    /** Called exactly once after {@link #destroy()}, when no run is in progress. */
    protected void onDestroy() {
    }

    /** The name given at construction. */
    public final String name() {
        return name;
    }

    /** True if started and neither stopped nor destroyed. */
    public final boolean isRunning() {
        synchronized (lock) {
            return !stopped;
        }
    }

    /** The configured period in milliseconds (before adjustment). */
    public final int timeoutMs() {
        synchronized (lock) {
            return timeoutMs;
        }
    }

    /** Arms the timer. No-op if already running or destroyed. */
    public final void start() {
        synchronized (lock) {
            if (destroyed || !stopped) {
                return;
            }
            stopped = false;
            // A run still in onTrigger re-arms when it finishes.
            if (timeout == null && !triggering) {
                schedule();
            }
        }
    }

    /** Disarms the timer. A run already inside {@code onTrigger} finishes but is not followed by another. */
    public final void stop() {
        synchronized (lock) {
            if (stopped) {
                return;
            }
            stopped = true;
            cancelArmed();
        }
    }

    /** Arms the timer with a fresh full period, whether or not it was running. No-op if destroyed. */
    public final void restart() {
        synchronized (lock) {
            if (destroyed) {
                return;
            }
            stopped = false;
            schedule();
        }
    }

    /** Restarts the current period if running. */
    public final void reset() {
        synchronized (lock) {
            reset(timeoutMs);
        }
    }

    /** Sets the period to {@code timeoutMs} and, if running, re-arms with it. */
    public final void reset(int timeoutMs) {
        checkTimeout(timeoutMs);
        synchronized (lock) {
            this.timeoutMs = timeoutMs;
            if (!stopped) {
                schedule();
            }
        }
    }

    /**
     * If a run is armed, runs {@code onTrigger} now on the calling thread (instead of at its
     * expiry) and re-arms a full period; otherwise does nothing. If {@code onTrigger} is already
     * running on another thread, that thread runs it once more instead.
     */
    public final void runOnceNow() {
        synchronized (lock) {
            if (timeout == null || !timeout.cancel()) {
                return;
            }
            timeout = null;
            if (!claimTrigger()) {
                return;
            }
        }
        triggerAndRearm();
    }

    /** Stops for good; {@link #onDestroy()} follows once no run is in progress. Idempotent. */
    public final void destroy() {
        boolean notify;
        synchronized (lock) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            stopped = true;
            cancelArmed();
            notify = claimDestroyNotification();
        }
        if (notify) {
            notifyDestroyed();
        }
    }

    private void onTimeout(Timeout fired) {
        synchronized (lock) {
            // A timeout replaced by reset/restart/stop whose cancel lost the race: drop it.
            if (fired != timeout) {
                return;
            }
            timeout = null;
            if (!claimTrigger()) {
                return;
            }
        }
        triggerAndRearm();
    }

    /** Caller holds the lock. True if the caller must run onTrigger; false if a run in progress will. */
    private boolean claimTrigger() {
        if (triggering) {
            rerun = true;
            return false;
        }
        triggering = true;
        return true;
    }

    private void triggerAndRearm() {
        boolean again = true;
        while (again) {
            try {
                onTrigger();
            } catch (Throwable t) {
                LOG.warn("RepeatedTimer {} onTrigger threw; it keeps repeating", name, t);
            }
            boolean notify = false;
            synchronized (lock) {
                again = rerun && !stopped;
                rerun = false;
                if (!again) {
                    triggering = false;
                    if (!stopped && timeout == null) {
                        try {
                            schedule();
                        } catch (RuntimeException e) {
                            stopped = true;
                            LOG.error("RepeatedTimer {} could not re-arm on {}; it is now stopped", name, timer, e);
                        }
                    }
                    notify = claimDestroyNotification();
                }
            }
            if (notify) {
                notifyDestroyed();
            }
        }
    }

    /** Caller holds the lock. Replaces any armed timeout with a new one. */
    private void schedule() {
        cancelArmed();
        int delay = adjustTimeout(timeoutMs);
        timeout = timer.newTimeout(fireTask, Math.max(0, delay), TimeUnit.MILLISECONDS);
    }

    private void cancelArmed() {
        if (timeout != null) {
            timeout.cancel();
            timeout = null;
        }
    }

    private boolean claimDestroyNotification() {
        if (destroyed && !triggering && !destroyNotified) {
            destroyNotified = true;
            return true;
        }
        return false;
    }

    private void notifyDestroyed() {
        try {
            onDestroy();
        } catch (Throwable t) {
            LOG.warn("RepeatedTimer {} onDestroy threw", name, t);
        }
    }

    private static int checkTimeout(int timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("timeoutMs must be > 0: " + timeoutMs);
        }
        return timeoutMs;
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "RepeatedTimer(" + name + ", timeoutMs=" + timeoutMs + ", "
                    + (destroyed ? "destroyed" : stopped ? "stopped" : "running") + ")";
        }
    }
}
