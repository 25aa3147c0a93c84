package io.wheelraft.core.spi;

import com.google.protobuf.ByteString;

import java.io.IOException;

/**
 * Accepts the chunks of a snapshot sent by the leader. Chunks of a file arrive in offset order;
 * a repeated or resumed chunk is accepted where it fits ({@link #nextOffset}). {@link #complete()}
 * verifies every file against the meta's checksums before the snapshot becomes visible.
 */
public interface SnapshotReceiver {

    /** Where the next chunk of {@code name} should start (0 if nothing received yet). */
    long nextOffset(String name);

    /**
     * Writes a chunk.
     *
     * @throws IllegalArgumentException if {@code offset} is not {@link #nextOffset(String)} or the file is not in the meta
     */
    void writeChunk(String name, long offset, ByteString data) throws IOException;

    /**
     * Verifies and publishes the snapshot; afterwards {@link SnapshotStorage#open()} returns it.
     *
     * @throws LogCorruptionException if a file's size or checksum does not match the meta
     */
    SnapshotReader complete() throws IOException;

    /** Discards what was received. */
    void abort();
}
