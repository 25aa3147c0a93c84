package io.wheelraft.storage;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.testkit.storage.LogStorageContract;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The {@link LogStorage} contract on a group's log in a RocksDB store with the default options
 * (synced, verified at open) except the pre-sized WAL, whose 64 MiB synced write at each open
 * would cost this suite seconds and is proven by {@code WalPresizerTest}. A restart closes the
 * whole store and opens the directory again.
 */
class RocksDbLogStorageContractTest extends LogStorageContract {

    @TempDir
    Path dir;

    private static final RocksDbStoreOptions OPTIONS = RocksDbStoreOptions.defaults().withPresizedWalBytes(0);

    private RocksDbStore store;

    @Override
    protected LogStorage newLog() {
        store = RocksDbStore.open(dir, OPTIONS);
        return store.logStorage("g");
    }

    @Override
    protected LogStorage restart(LogStorage log) {
        store.close();
        store = RocksDbStore.open(dir, OPTIONS);
        return store.logStorage("g");
    }

    @Override
    protected void release(LogStorage log) {
        log.close();
        store.close();
    }
}
