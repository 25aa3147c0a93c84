package io.wheelraft.rpc;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A non-blocking budget of bytes in flight. {@link #tryAcquire} never waits: a caller over the
 * budget is refused at once (the transport must never block a node's thread). One message is
 * always admitted when nothing is in flight, so a single large message cannot wedge the budget.
 * Thread-safe.
 */
final class InFlightBytes {

    private final long limit;
    private final AtomicLong used = new AtomicLong();

    InFlightBytes(long limit) {
        this.limit = limit;
    }

    boolean tryAcquire(long bytes) {
        while (true) {
            long current = used.get();
            if (current > 0 && current + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(current, current + bytes)) {
                return true;
            }
        }
    }

    void release(long bytes) {
        used.addAndGet(-bytes);
    }

    long used() {
        return used.get();
    }

    long limit() {
        return limit;
    }
}
