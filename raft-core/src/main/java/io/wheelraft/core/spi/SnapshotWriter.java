package io.wheelraft.core.spi;

import io.wheelraft.proto.SnapshotMeta;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Collects the files of a snapshot being saved. Nothing is visible until {@link #commit}; an
 * aborted or crashed write leaves the previous snapshot in place.
 */
public interface SnapshotWriter {

    /** Opens a new file of the snapshot for writing; the name is relative (no "..", no leading "/"). */
    OutputStream addFile(String name) throws IOException;

    /**
     * Makes the snapshot durable and visible, with the given index, term and configuration
     * (the file list and checksums are filled in by the storage).
     *
     * @return the meta as stored
     */
    SnapshotMeta commit(SnapshotMeta meta) throws IOException;

    /** Discards what was written. */
    void abort();
}
