package io.wheelraft.core.storage.memory;

import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * One complete snapshot as the memory storage keeps it: the meta (with the file list, sizes and
 * checksums) and the bytes of each file. Immutable once built: the arrays are never written
 * after publication, so readers share them without copying or locking.
 */
record StoredSnapshot(SnapshotMeta meta, Map<String, byte[]> files) {

    StoredSnapshot {
        files = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(files));
    }

    static int crc32c(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length);
        return (int) crc.getValue();
    }

    static SnapshotFile describe(String name, byte[] data) {
        return SnapshotFile.newBuilder().setName(name).setSize(data.length).setCrc32C(crc32c(data)).build();
    }
}
