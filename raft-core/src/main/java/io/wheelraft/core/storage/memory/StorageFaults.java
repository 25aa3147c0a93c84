package io.wheelraft.core.storage.memory;

import io.wheelraft.core.spi.StorageException;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Disk errors injected at the SPI boundary of an in-memory storage, so tests and the simulation
 * can see how a node reacts when a write fails. A storage consults its faults before every
 * mutating call and, when one is armed, throws it without changing any state (as a disk write
 * that did not happen).
 *
 * <p>Two kinds: a one-shot failure ({@link #failNextWrite}) consumed by the first write that sees
 * it, and a sticky failure ({@link #failAllWrites}) that fails every write until {@link #clear()}.
 * Thread-safe: the test thread may arm faults while the node writes.
 */
public final class StorageFaults {

    private final AtomicReference<StorageException> nextWrite = new AtomicReference<>();
    private volatile StorageException allWrites;

    /** Makes the next write fail with {@code failure} (replacing a one-shot failure not yet consumed). */
    public void failNextWrite(StorageException failure) {
        nextWrite.set(Objects.requireNonNull(failure, "failure"));
    }

    /** Makes every write fail with {@code failure} until {@link #clear()} (a dead disk). */
    public void failAllWrites(StorageException failure) {
        allWrites = Objects.requireNonNull(failure, "failure");
    }

    /** Disarms both kinds of failure. */
    public void clear() {
        nextWrite.set(null);
        allWrites = null;
    }

    /**
     * Throws the armed failure itself (so a test can inject a specific subtype such as
     * {@code LogCorruptionException}), if any. Called by the storages before they change anything.
     */
    void beforeWrite() {
        StorageException sticky = allWrites;
        StorageException failure = sticky != null ? sticky : nextWrite.getAndSet(null);
        if (failure != null) {
            throw failure;
        }
    }
}
