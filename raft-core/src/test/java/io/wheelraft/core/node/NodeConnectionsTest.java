package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.sim.SimFaults;
import io.wheelraft.core.sim.SimNetwork;
import io.wheelraft.core.sim.SimRuntime;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which connections a node asks its transport to open ahead of need. */
class NodeConnectionsTest {

    private static final PeerId N1 = new PeerId("n1", 1001);
    private static final PeerId N2 = new PeerId("n2", 1002);
    private static final PeerId N3 = new PeerId("n3", 1003);

    private final SimRuntime runtime = new SimRuntime(7);
    private final SimNetwork network = new SimNetwork(runtime, new Random(7), new SimFaults());

    @Test
    void aVoterOpensConnectionsToTheOtherVotersWhenItStarts() {
        RecordingTransport transport = new RecordingTransport(network.transport(N1.endpoint()));

        start(N1, new Configuration(List.of(N1, N2, N3)), transport);

        assertEquals(Set.of(N2, N3), Set.copyOf(transport.prepared), "a restarted voter must not dial its peers only when it campaigns");
    }

    @Test
    void aNodeThatIsNotAVoterOpensNone() {
        RecordingTransport transport = new RecordingTransport(network.transport(N3.endpoint()));

        start(N3, Configuration.empty(), transport); // waits to be added by the cluster

        assertTrue(transport.prepared.isEmpty(), "prepared " + transport.prepared);
    }

    private void start(PeerId self, Configuration conf, RaftTransport transport) {
        NodeOptions o = InMemoryNodeOptions.of(conf, runtime);
        new NodeImpl("g", self, o, transport, runtime).start();
    }

    /** Passes everything to the simulated network and records the connections asked for. */
    private static final class RecordingTransport implements RaftTransport {
        private final RaftTransport delegate;
        final List<PeerId> prepared = new CopyOnWriteArrayList<>();

        RecordingTransport(RaftTransport delegate) {
            this.delegate = delegate;
        }

        @Override
        public void prepareConnection(PeerId peer) {
            prepared.add(peer);
        }

        @Override
        public void register(String groupId, PeerId self, RaftRequestHandler handler) {
            delegate.register(groupId, self, handler);
        }

        @Override
        public void unregister(String groupId, PeerId self) {
            delegate.unregister(groupId, self);
        }

        @Override
        public CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs) {
            return delegate.requestVote(target, request, timeoutMs);
        }

        @Override
        public CompletableFuture<AppendEntriesResponse> appendEntries(PeerId target, AppendEntriesRequest request, long timeoutMs) {
            return delegate.appendEntries(target, request, timeoutMs);
        }

        @Override
        public CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId target, InstallSnapshotRequest request, long timeoutMs) {
            return delegate.installSnapshot(target, request, timeoutMs);
        }

        @Override
        public CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId target, TimeoutNowRequest request, long timeoutMs) {
            return delegate.timeoutNow(target, request, timeoutMs);
        }

        @Override
        public CompletableFuture<ReadIndexResponse> readIndex(PeerId target, ReadIndexRequest request, long timeoutMs) {
            return delegate.readIndex(target, request, timeoutMs);
        }

        @Override
        public void addConnectionListener(ConnectionListener listener) {
            delegate.addConnectionListener(listener);
        }

        @Override
        public void removeConnectionListener(ConnectionListener listener) {
            delegate.removeConnectionListener(listener);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
