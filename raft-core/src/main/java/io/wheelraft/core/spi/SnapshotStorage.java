package io.wheelraft.core.spi;

import io.wheelraft.proto.SnapshotMeta;

/**
 * Where a node keeps snapshots of its state machine. A snapshot is a set of named files plus a
 * {@link SnapshotMeta}; it becomes visible to {@link #open()} only once complete and durable, and
 * the previous one is deleted only after that. Implementations: in memory (raft-core) and local
 * directories (raft-storage).
 */
public interface SnapshotStorage extends AutoCloseable {

    /** Starts a new snapshot that the state machine fills (onSnapshotSave). */
    SnapshotWriter create();

    /** The latest complete snapshot, or null if there is none. The caller closes it. */
    SnapshotReader open();

    /**
     * Starts (or resumes, if one for the same meta is partly received) receiving a snapshot
     * from the leader by InstallSnapshot chunks.
     */
    SnapshotReceiver receive(SnapshotMeta meta);

    @Override
    void close();
}
