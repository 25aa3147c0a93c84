package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.sim.SimFaults;
import io.wheelraft.core.sim.SimNetwork;
import io.wheelraft.core.sim.SimRuntime;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;
import io.wheelraft.timer.HashedWheelTimer;
import io.wheelraft.timer.Timer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node schedules on the same wheel whose clock it reads: its runtime's. */
class NodeClockTest {

    private static final PeerId N1 = new PeerId("n1", 1001);

    private final SimRuntime runtime = new SimRuntime(3);
    private final SimNetwork network = new SimNetwork(runtime, new Random(3), new SimFaults());

    private NodeOptions options(Timer timer) {
        return new NodeOptions().initialConfiguration(new Configuration(List.of(N1))).stateMachine(new StateMachineAdapter() {
                    @Override
                    public void onApply(io.wheelraft.core.Iterator it) {
                        while (it.hasNext()) {
                            it.next();
                        }
                    }
                }).logStorage(new MemoryLogStorage()).metaStorage(new MemoryMetaStorage())
                .snapshotStorage(new MemorySnapshotStorage()).timer(timer).snapshotIntervalSecs(0);
    }

    @Test
    void aTimerOtherThanTheRuntimesIsRefused() {
        Timer foreign = HashedWheelTimer.builder().build();
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new NodeImpl("g", N1, options(foreign), network.transport(N1.endpoint()), runtime));
            assertTrue(e.getMessage().contains("runtime's timer"), e.getMessage());
        } finally {
            foreign.stop();
        }
    }

    @Test
    void theRuntimesTimerOrNoneIsAccepted() {
        assertDoesNotThrow(() -> new NodeImpl("g", N1, options(runtime.timer()), network.transport(N1.endpoint()), runtime));
        assertDoesNotThrow(() -> new NodeImpl("g", N1, options(null), network.transport(N1.endpoint()), runtime));
    }
}
