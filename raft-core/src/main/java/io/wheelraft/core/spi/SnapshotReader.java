package io.wheelraft.core.spi;

import com.google.protobuf.ByteString;
import io.wheelraft.proto.SnapshotMeta;

import java.io.IOException;
import java.io.InputStream;

/** Reads one complete snapshot: by whole files for the state machine, by chunks for InstallSnapshot. */
public interface SnapshotReader extends AutoCloseable {

    /** Index, term, configuration and the list of files with their sizes and checksums. */
    SnapshotMeta meta();

    /** Opens a file of the snapshot; the name must be one of {@code meta().getFilesList()}. */
    InputStream openFile(String name) throws IOException;

    /** Reads up to {@code maxBytes} of {@code name} from {@code offset}; empty at the end. */
    ByteString readChunk(String name, long offset, int maxBytes) throws IOException;

    @Override
    void close();
}
