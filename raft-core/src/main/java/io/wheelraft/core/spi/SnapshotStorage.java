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

    /**
     * What this storage found damaged when it opened (the latest snapshot's meta or a file failing
     * its checksum) and set aside, naming the snapshot and file; null when every snapshot it kept
     * verified. {@link #open()} never returns a damaged snapshot. Non-null means the node lost
     * state it had: it fences itself and repairs from the leader.
     */
    default String damageFoundAtOpen() {
        return null;
    }

    @Override
    void close();
}
