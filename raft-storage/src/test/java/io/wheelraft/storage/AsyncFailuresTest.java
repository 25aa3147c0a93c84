package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.junit.jupiter.api.Test;
import org.rocksdb.Status;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store's background-failure fan-out: each listener told once, a removed one not at all, a late one at once. */
class AsyncFailuresTest {

    @Test
    void everyRegisteredListenerIsToldOnceAndARemovedOneNever() {
        RocksDbStore.AsyncFailures failures = new RocksDbStore.AsyncFailures(Path.of("/data/log"));
        List<String> told = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 1000; i++) {
            String name = "group-" + i;
            failures.register(e -> told.add(name));
        }
        Consumer<StorageException> removed = e -> told.add("removed");
        failures.register(removed);
        failures.unregister(removed);

        failures.fail("flush", new Status(Status.Code.IOError, Status.SubCode.None, "No space left on device"));
        failures.fail("compaction", new Status(Status.Code.IOError, Status.SubCode.None, "again"));

        assertEquals(1000, told.size(), "each listener once, the removed one never");
        assertFalse(told.contains("removed"));
        List<StorageException> late = new CopyOnWriteArrayList<>();
        failures.register(late::add);
        assertEquals(1, late.size(), "a listener registered after the failure is told at once");
        assertTrue(late.get(0).getMessage().contains("flush") && late.get(0).getMessage().contains("/data/log"), late.get(0).getMessage());
    }
}
