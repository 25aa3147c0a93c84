package io.wheelraft.testkit.transport;

import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.timer.HashedWheelTimer;

import java.util.function.BooleanSupplier;

/** The {@link RaftTransport} contract on the in-process transport, with real threads and time. */
class LocalTransportContractTest extends RaftTransportContract {

    private final HashedWheelTimer timer = new HashedWheelTimer();
    private final LocalNetwork network = new LocalNetwork(timer);
    private int processes;

    @Override
    protected Host startHost() {
        String endpoint = "process-" + (++processes) + ":" + (8000 + processes);
        return new Host(network.transport(endpoint), endpoint);
    }

    @Override
    protected void kill(Host host) {
        network.kill(host.endpoint());
    }

    @Override
    protected String unreachableEndpoint() {
        return "nowhere:1";
    }

    @Override
    protected boolean await(BooleanSupplier condition, long timeoutMs) throws InterruptedException {
        return pollInRealTime(condition, timeoutMs);
    }

    @Override
    protected void releaseAll() {
        timer.stop();
    }
}
