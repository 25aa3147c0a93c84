package io.wheelraft.testkit.storage;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.storage.memory.MemoryLogStorage;

/** The {@link LogStorage} contract on the in-memory log; a restart is a reopen of the same instance. */
class MemoryLogStorageContractTest extends LogStorageContract {

    @Override
    protected LogStorage newLog() {
        return new MemoryLogStorage();
    }

    @Override
    protected LogStorage restart(LogStorage log) {
        MemoryLogStorage memory = (MemoryLogStorage) log;
        memory.close();
        memory.reopen();
        return memory;
    }
}
