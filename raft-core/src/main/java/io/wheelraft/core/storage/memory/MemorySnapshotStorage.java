package io.wheelraft.core.storage.memory;

import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link SnapshotStorage} whose files are byte arrays in memory, for tests and the simulated
 * cluster. A snapshot becomes visible to {@link #open()} only when its writer commits or its
 * receiver completes (after every file is verified); until then the previous snapshot stays in
 * place. Published snapshots are immutable, so a reader opened on an older snapshot keeps
 * reading it even after a newer one replaces it.
 *
 * <p>A snapshot never replaces a newer one: publishing one whose last included index is below
 * the current snapshot's fails with {@link IllegalStateException} and leaves the current one.
 *
 * <p>Threading: the storage may be used from several threads (the node's lane, a snapshot
 * executor); publication and the in-progress receiver are guarded by this object's monitor.
 * Each writer and receiver is used by one thread at a time. Survives {@link #close()} and
 * {@link #reopen()} like the other memory storages, for simulated restarts.
 *
 * <p>Faults: {@link #faults()} fails writer commits and receiver chunk writes and completions
 * before they change anything.
 */
public final class MemorySnapshotStorage implements SnapshotStorage {

    private final StorageFaults faults = new StorageFaults();
    private StoredSnapshot latest;
    private MemorySnapshotReceiver receiving;
    private boolean closed;

    /** The fault hook of this storage (see {@link StorageFaults}). */
    public StorageFaults faults() {
        return faults;
    }

    @Override
    public synchronized SnapshotWriter create() {
        checkOpen();
        return new MemorySnapshotWriter(this);
    }

    @Override
    public synchronized SnapshotReader open() {
        checkOpen();
        return latest == null ? null : new MemorySnapshotReader(latest);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Resumes the receiver in progress if its meta equals {@code meta}; otherwise discards it
     * and starts afresh.
     *
     * @throws IllegalArgumentException if the meta names a file badly or twice
     */
    @Override
    public synchronized SnapshotReceiver receive(SnapshotMeta meta) {
        Objects.requireNonNull(meta, "meta");
        checkOpen();
        Set<String> names = new HashSet<>();
        for (SnapshotFile f : meta.getFilesList()) {
            SnapshotFileNames.validate(f.getName());
            if (!names.add(f.getName())) {
                throw new IllegalArgumentException("snapshot meta lists file '" + f.getName() + "' twice");
            }
        }
        if (receiving != null && receiving.meta().equals(meta)) {
            return receiving;
        }
        receiving = new MemorySnapshotReceiver(this, meta);
        return receiving;
    }

    /** Closes the storage; later calls except {@link #reopen()} throw {@link StorageException}. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
    }

    /** Makes a closed storage usable again with the snapshot it held (a restart on the same disk). */
    public synchronized void reopen() {
        closed = false;
    }

    /** Publishes a complete, verified snapshot (called by writers and receivers). */
    synchronized void publish(StoredSnapshot snapshot) {
        checkOpen();
        if (latest != null && snapshot.meta().getLastIncludedIndex() < latest.meta().getLastIncludedIndex()) {
            throw new IllegalStateException("snapshot at index " + snapshot.meta().getLastIncludedIndex()
                    + " would replace a newer snapshot at index " + latest.meta().getLastIncludedIndex());
        }
        latest = snapshot;
    }

    /** Forgets {@code receiver} if it is the one in progress (it completed or was aborted). */
    synchronized void finished(MemorySnapshotReceiver receiver) {
        if (receiving == receiver) {
            receiving = null;
        }
    }

    synchronized void checkOpen() {
        if (closed) {
            throw new StorageException("memory snapshot storage is closed");
        }
    }
}
