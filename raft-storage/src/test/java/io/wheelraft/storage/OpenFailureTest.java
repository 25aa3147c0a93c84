package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a failed RocksDB open is classified: damage to repair, a directory in use, or another failure. */
class OpenFailureTest {

    private static final Path DIR = Path.of("/data/node2/log");

    @Test
    void aBlockChecksumMismatchIsDamageNotADirectoryInUse() {
        RocksDBException e = new RocksDBException("block checksum mismatch: stored = 845 computed = 12 in /data/node2/log/000009.sst offset 0",
                new Status(Status.Code.Corruption, Status.SubCode.None, "block checksum mismatch"));
        RuntimeException failure = RocksDbStoreOpener.openFailure(DIR, e);
        assertFalse(failure instanceof StorageException, failure.toString());
        assertTrue(failure.getMessage().contains("000009.sst"), failure.getMessage());
    }

    @Test
    void aHeldLockFileIsADirectoryInUse() {
        RocksDBException e = new RocksDBException("While lock file: /data/node2/log/LOCK: Resource temporarily unavailable",
                new Status(Status.Code.IOError, Status.SubCode.None, "lock"));
        RuntimeException failure = RocksDbStoreOpener.openFailure(DIR, e);
        assertInstanceOf(StorageException.class, failure);
        assertTrue(failure.getMessage().contains("already in use"), failure.getMessage());
    }

    @Test
    void anotherIoErrorIsReportedAsItIs() {
        RocksDBException e = new RocksDBException("IO error: No space left on device",
                new Status(Status.Code.IOError, Status.SubCode.NoSpace, "No space left on device"));
        RuntimeException failure = RocksDbStoreOpener.openFailure(DIR, e);
        assertInstanceOf(StorageException.class, failure);
        assertTrue(failure.getMessage().startsWith("cannot open RocksDB in"), failure.getMessage());
    }
}
