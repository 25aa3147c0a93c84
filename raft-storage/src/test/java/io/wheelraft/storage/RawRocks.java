package io.wheelraft.storage;

import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Opens a closed store's directory with plain RocksDB so tests can damage it on purpose. */
final class RawRocks implements AutoCloseable {

    final RocksDB db;
    final ColumnFamilyHandle meta;
    final ColumnFamilyHandle log;
    final ColumnFamilyHandle conf;
    private final DBOptions options;

    RawRocks(Path dir) throws RocksDBException {
        options = new DBOptions();
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        db = RocksDB.open(options, dir.toString(), List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
                new ColumnFamilyDescriptor("log".getBytes(StandardCharsets.UTF_8)),
                new ColumnFamilyDescriptor("conf".getBytes(StandardCharsets.UTF_8))), handles);
        meta = handles.get(0);
        log = handles.get(1);
        conf = handles.get(2);
    }

    @Override
    public void close() {
        meta.close();
        log.close();
        conf.close();
        db.close();
        options.close();
    }
}
