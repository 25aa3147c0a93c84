package io.wheelraft.rpc;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Whether this process's I/O threads are behind, measured with probes: a tiny task posted to each
 * event loop, which notes that it ran. A probe still waiting at the next check shows that its loop
 * has not run anything new for a whole interval, so a peer's answer may be sitting unread in this
 * process (and its pings unsent). The liveness watch then counts silence again from after the
 * lag, as it does after a stall of its own timer thread; otherwise a process whose event loops
 * fell a second behind (a burst of thousands of groups' messages on two cores) reported every peer
 * silent at once, and every group it led stepped down for check-quorum.
 *
 * <p>Probes are posted only when a peer is about to be reported silent (a probe wakes an idle loop,
 * and on a virtualised machine forty wake-ups a second cost a visible share of an idle process's
 * CPU). One probe per loop at a time; {@link #lagNanos} is the age of the oldest probe not yet
 * run, {@link #answeredSince} whether every loop ran one posted since a given time. Thread-safe.
 */
final class IoLag {

    private static final long NONE = Long.MIN_VALUE;

    private final List<? extends Executor> loops;
    /** Per loop: when its probe waiting to run was posted, or {@link #NONE}. */
    private final AtomicLongArray postedAt;
    /** Per loop: when the last probe it ran had been posted, or {@link #NONE}. */
    private final AtomicLongArray ranPostedAt;

    IoLag(List<? extends Executor> loops) {
        this.loops = List.copyOf(loops);
        this.postedAt = new AtomicLongArray(loops.size());
        this.ranPostedAt = new AtomicLongArray(loops.size());
        for (int i = 0; i < loops.size(); i++) {
            postedAt.set(i, NONE);
            ranPostedAt.set(i, NONE);
        }
    }

    /** Posts a probe to every loop that has none waiting. */
    void probe(long nowNanos) {
        for (int i = 0; i < loops.size(); i++) {
            if (postedAt.compareAndSet(i, NONE, nowNanos)) {
                int loop = i;
                try {
                    loops.get(i).execute(() -> {
                        ranPostedAt.set(loop, nowNanos);
                        postedAt.set(loop, NONE);
                    });
                } catch (RejectedExecutionException e) {
                    postedAt.set(i, NONE); // the loop is shutting down with the transport
                }
            }
        }
    }

    /** Whether every loop has run a probe posted at {@code sinceNanos} or later. */
    boolean answeredSince(long sinceNanos) {
        for (int i = 0; i < loops.size(); i++) {
            long ran = ranPostedAt.get(i);
            if (ran == NONE || ran - sinceNanos < 0) {
                return false;
            }
        }
        return true;
    }

    /** The age of the oldest probe not yet run (0 when every loop has run its probe). */
    long lagNanos(long nowNanos) {
        long lag = 0;
        for (int i = 0; i < loops.size(); i++) {
            long posted = postedAt.get(i);
            if (posted != NONE) {
                lag = Math.max(lag, nowNanos - posted);
            }
        }
        return lag;
    }
}
