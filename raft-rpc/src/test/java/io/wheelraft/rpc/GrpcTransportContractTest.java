package io.wheelraft.rpc;

import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.testkit.transport.RaftTransportContract;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The {@link RaftTransport} contract on the gRPC transport over loopback sockets. A kill closes the
 * process's transport (its server and channels); {@code ConnectionLossTest} also proves a SIGKILLed
 * child process is reported.
 */
class GrpcTransportContractTest extends RaftTransportContract {

    private final List<GrpcRaftTransport> started = new ArrayList<>();

    @Override
    protected Host startHost() {
        GrpcRaftTransport t = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        started.add(t);
        return new Host(t, t.endpoint());
    }

    @Override
    protected void kill(Host host) {
        host.transport().close();
    }

    @Override
    protected String unreachableEndpoint() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    @Override
    protected boolean await(BooleanSupplier condition, long timeoutMs) throws InterruptedException {
        return pollInRealTime(condition, timeoutMs);
    }

    @Override
    protected void releaseAll() {
        started.forEach(GrpcRaftTransport::close);
    }
}
