package io.wheelraft.testkit.transport;

import io.wheelraft.core.sim.SimFaults;
import io.wheelraft.core.sim.SimNetwork;
import io.wheelraft.core.sim.SimRuntime;
import io.wheelraft.core.spi.RaftTransport;

import java.util.Random;
import java.util.function.BooleanSupplier;

/**
 * The {@link RaftTransport} contract on the simulated network with its default faults (latency
 * only, no loss): time is the simulation's clock, advanced one millisecond per step.
 */
class SimTransportContractTest extends RaftTransportContract {

    private static final long SEED = 20;

    private final SimRuntime runtime = new SimRuntime(SEED);
    private final SimNetwork network = new SimNetwork(runtime, new Random(SEED), new SimFaults());
    private int processes;

    @Override
    protected Host startHost() {
        String endpoint = "process-" + (++processes) + ":" + (8000 + processes);
        return new Host(network.transport(endpoint), endpoint);
    }

    @Override
    protected void kill(Host host) {
        network.crash(host.endpoint(), true);
    }

    @Override
    protected String unreachableEndpoint() {
        return "nowhere:1";
    }

    @Override
    protected boolean await(BooleanSupplier condition, long timeoutMs) {
        long deadline = runtime.nowMs() + timeoutMs;
        while (!condition.getAsBoolean()) {
            if (runtime.nowMs() >= deadline) {
                return false;
            }
            runtime.step();
        }
        return true;
    }

    @Override
    protected void releaseAll() {
    }
}
