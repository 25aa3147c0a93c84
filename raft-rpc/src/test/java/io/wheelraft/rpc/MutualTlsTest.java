package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.NodeSelector;
import io.wheelraft.proto.NodeStatusRequest;
import io.wheelraft.rpc.proto.AdminServiceGrpc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.wheelraft.rpc.Requests.GROUP;
import static io.wheelraft.rpc.Requests.answer;
import static io.wheelraft.rpc.Requests.append;
import static io.wheelraft.rpc.Requests.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MutualTlsTest {

    @TempDir
    static Path dir;

    private static TestCertificates pki;
    private static GrpcRaftTransport follower;
    private static PeerId followerId;

    @BeforeAll
    static void createPkiAndStartANode() throws Exception {
        pki = new TestCertificates(dir);
        pki.createCa("cluster-ca");
        pki.createSigned("node-a", "cluster-ca");
        pki.createCa("rogue-ca");
        pki.createSigned("intruder", "rogue-ca");
        follower = GrpcRaftTransport.builder().listen("127.0.0.1", 0)
                .options(RpcOptions.builder().tls(pki.tls("node-a", "cluster-ca")).build()).start();
        followerId = Requests.peerAt(follower);
        follower.register(GROUP, followerId, new FakeHandler());
    }

    @AfterAll
    static void stop() {
        follower.close();
    }

    @Test
    void peersWithCertificatesFromTheClusterCaTalk() throws Exception {
        try (GrpcRaftTransport leader = GrpcRaftTransport.builder()
                .options(RpcOptions.builder().tls(pki.tls("node-a", "cluster-ca")).build()).start()) {
            PeerId leaderId = Requests.peerAt(leader);
            assertTrue(answer(leader.appendEntries(followerId, append(leaderId, followerId, 1, 1, 16), 10_000)).getSuccess());
        }
    }

    @Test
    void clientWithACertificateFromAnotherCaIsRefused() throws Exception {
        // The intruder trusts the cluster CA (it can verify the server) but its own certificate is not trusted.
        try (GrpcRaftTransport intruder = GrpcRaftTransport.builder()
                .options(RpcOptions.builder().tls(pki.tls("intruder", "cluster-ca")).build()).start()) {
            PeerId intruderId = Requests.peerAt(intruder);
            assertEquals(Kind.UNREACHABLE, failure(intruder.appendEntries(followerId, append(intruderId, followerId, 1, 1, 16), 10_000)).kind());
        }
    }

    @Test
    void plainTextClientIsRefused() throws Exception {
        try (GrpcRaftTransport plain = GrpcRaftTransport.builder().start()) {
            PeerId plainId = Requests.peerAt(plain);
            assertEquals(Kind.UNREACHABLE, failure(plain.appendEntries(followerId, append(plainId, followerId, 1, 1, 16), 10_000)).kind());
        }
    }

    @Test
    void adminServiceIsAlsoClosedToUntrustedClients() throws Exception {
        ManagedChannel channel = RaftChannels.open(follower.endpoint(),
                RpcOptions.builder().tls(pki.tls("intruder", "cluster-ca")).build());
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> AdminServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .status(NodeStatusRequest.newBuilder().setNode(NodeSelector.newBuilder().setGroupId(GROUP)).build()));
            assertEquals(io.grpc.Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
