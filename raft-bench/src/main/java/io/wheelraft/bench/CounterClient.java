package io.wheelraft.bench;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The benchmark's view of one system's counter client: an asynchronous "add 1" and a way to wait
 * until the cluster has a leader that takes writes. Each system implements it on its own public
 * client API, so the load pattern ({@link ClosedLoopLoad}) is the same code for all three.
 *
 * <p>Threading: {@link #increment} may be called from any thread, concurrently, but at most once at
 * a time per {@code slot} (a slot is one closed-loop client; WheelRaft's exactly-once sessions
 * need that order). Futures may complete on the system's own I/O threads.
 */
interface CounterClient extends AutoCloseable {

    /** Most slots a load may use. */
    int MAX_SLOTS = 2048;

    /**
     * Blocks until one increment has been acknowledged (a leader is elected and reachable).
     *
     * @throws IllegalStateException if none is acknowledged within {@code timeout}
     */
    void awaitLeader(Duration timeout) throws InterruptedException;

    /** Adds 1 (an 8-byte delta); completes with the new value, or exceptionally if not acknowledged. */
    CompletableFuture<Long> increment(int slot);

    @Override
    void close();
}
