package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.sim.SimRuntime;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;

/** Options of a node on in-memory storage and a simulated runtime's timer, applying and ignoring every entry, no snapshots. */
final class InMemoryNodeOptions {

    private InMemoryNodeOptions() {
    }

    static NodeOptions of(Configuration conf, SimRuntime runtime) {
        return new NodeOptions()
                .initialConfiguration(conf)
                .stateMachine(new StateMachineAdapter() {
                    @Override
                    public void onApply(Iterator it) {
                        while (it.hasNext()) {
                            it.next();
                        }
                    }
                })
                .logStorage(new MemoryLogStorage())
                .metaStorage(new MemoryMetaStorage())
                .snapshotStorage(new MemorySnapshotStorage())
                .timer(runtime.timer())
                .snapshotIntervalSecs(0);
    }
}
