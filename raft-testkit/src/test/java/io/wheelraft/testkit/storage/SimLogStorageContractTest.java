package io.wheelraft.testkit.storage;

import io.wheelraft.core.sim.SimLogStorage;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.storage.memory.MemoryLogStorage;

/**
 * The {@link LogStorage} contract on the simulated member's log with no fault armed: the
 * simulation's nodes run on it, so it must behave as a real log does.
 */
class SimLogStorageContractTest extends LogStorageContract {

    @Override
    protected LogStorage newLog() {
        return new SimLogStorage(new MemoryLogStorage());
    }

    @Override
    protected LogStorage restart(LogStorage log) {
        SimLogStorage sim = (SimLogStorage) log;
        sim.close();
        sim.disk().reopen();
        sim.restart(true);
        return sim;
    }
}
