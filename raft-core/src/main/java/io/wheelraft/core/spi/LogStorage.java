package io.wheelraft.core.spi;

import io.wheelraft.proto.LogEntry;

import java.util.List;

/**
 * Where a node keeps its Raft log. Implementations: in memory (raft-core, for tests and the
 * simulation) and RocksDB (raft-storage, the default).
 *
 * <p>Contract:
 * <ul>
 *   <li>Indexes are contiguous from {@link #firstLogIndex()} to {@link #lastLogIndex()}; an empty
 *       log has {@code lastLogIndex() == firstLogIndex() - 1}. A fresh log starts at index 1.</li>
 *   <li>{@link #append} is durable when it returns (when the storage is configured to sync):
 *       a node acknowledges entries only after that.</li>
 *   <li>Reads of an index outside the range return null ({@link #entry}) or 0 ({@link #term}).</li>
 *   <li>Corruption (checksum mismatch, gap, truncated value) throws {@link LogCorruptionException}
 *       naming the index and location; it is never skipped.</li>
 *   <li>The node calls mutating methods from one thread at a time; reads may come from other
 *       threads concurrently and must see either the old or the new state.</li>
 * </ul>
 *
 * <p>raft-testkit's {@code LogStorageContract} checks all of this: an implementation passes it.
 */
public interface LogStorage extends AutoCloseable {

    /** First index still held (after prefix truncation); 1 for a fresh log. */
    long firstLogIndex();

    /** Last index held; {@code firstLogIndex() - 1} when empty. */
    long lastLogIndex();

    /** The entry at {@code index}, or null if not held. */
    LogEntry entry(long index);

    /** The term of the entry at {@code index}, or 0 if not held. */
    long term(long index);

    /**
     * Appends entries whose indexes continue the log ({@code entries.get(0).getIndex() ==
     * lastLogIndex() + 1}), as one atomic and durable batch.
     *
     * @throws IllegalArgumentException if the indexes do not continue the log
     * @throws StorageException on I/O failure (nothing of the batch is then considered written)
     */
    void append(List<LogEntry> entries);

    /**
     * Whether {@link #appendAsync} hands the write to be made durable together with other logs'
     * writes (one write and one sync for many groups) instead of writing on the calling thread.
     * A node then queues its appends that way and no thread of its own waits for the disk.
     */
    default boolean appendsTogether() {
        return false;
    }

    /**
     * Drops the entries after {@code truncateAfter} (none when it is negative) and appends
     * {@code entries}, which must continue the log from there, as one durable write; {@code done}
     * is told null once it is durable, or the {@link StorageException}, perhaps on another thread.
     * The new entries are readable once {@code done} is told. At most one such write is under way
     * per log: the caller starts no other write to it until {@code done}. The default does
     * {@link #truncateSuffix} and {@link #append} on the calling thread.
     *
     * @throws IllegalArgumentException if the entries do not continue the log (nothing is written)
     */
    default void appendAsync(long truncateAfter, List<LogEntry> entries, java.util.function.Consumer<RuntimeException> done) {
        long keptLast = truncateAfter < 0 ? lastLogIndex() : Math.max(firstLogIndex() - 1, Math.min(lastLogIndex(), truncateAfter));
        if (!entries.isEmpty() && entries.get(0).getIndex() != keptLast + 1) {
            throw new IllegalArgumentException("entry index " + entries.get(0).getIndex() + " does not continue the log: expected "
                    + (keptLast + 1) + " (log holds " + firstLogIndex() + ".." + lastLogIndex()
                    + (truncateAfter < 0 ? "" : ", cut after " + truncateAfter) + ")");
        }
        try {
            if (truncateAfter >= 0) {
                truncateSuffix(truncateAfter);
            }
            append(entries);
        } catch (StorageException e) {
            done.accept(e);
            return;
        }
        done.accept(null);
    }

    /** Drops entries before {@code firstIndexKept}. No-op if it is not past the first index. */
    void truncatePrefix(long firstIndexKept);

    /** Drops entries after {@code lastIndexKept} (conflict resolution on followers). */
    void truncateSuffix(long lastIndexKept);

    /**
     * Empties the log so that the next appended index is {@code nextLogIndex} (after installing a
     * snapshot that ends at {@code nextLogIndex - 1}).
     *
     * @throws IllegalArgumentException if {@code nextLogIndex < 1}
     */
    void reset(long nextLogIndex);

    /**
     * Every configuration entry still in the log, in index order, so a restarting node recovers
     * its membership without scanning the log. Default: scans.
     */
    default List<LogEntry> configurationEntries() {
        List<LogEntry> out = new java.util.ArrayList<>();
        for (long i = firstLogIndex(); i <= lastLogIndex(); i++) {
            LogEntry e = entry(i);
            if (e != null && e.getType() == io.wheelraft.proto.EntryType.ENTRY_TYPE_CONFIGURATION) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * What this storage found damaged when it opened and had to drop to open at all (a WAL record
     * that failed its checksum and everything after it, a log whose files failed verification),
     * naming the file and position; null when it opened intact. Non-null means entries the node
     * may have acknowledged can be gone: the node fences itself and repairs from the leader.
     */
    default String damageFoundAtOpen() {
        return null;
    }

    /**
     * Registers the one listener told, once, when the storage fails outside a call (a RocksDB
     * background error such as a failed flush on a full disk). The node stops at once: the
     * storage can no longer promise durability. Storages that cannot fail that way ignore it.
     */
    default void onAsyncFailure(java.util.function.Consumer<StorageException> listener) {
    }

    /**
     * Releases the log. Idempotent; afterwards reading or writing entries throws
     * {@link StorageException}.
     */
    @Override
    void close();
}
