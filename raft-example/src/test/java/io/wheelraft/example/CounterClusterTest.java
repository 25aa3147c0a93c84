package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientCalls;
import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.ClientReply;
import io.wheelraft.client.proto.Command;
import io.wheelraft.client.proto.Outcome;
import io.wheelraft.client.proto.RaftClientServiceGrpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Three counter nodes in this JVM (RocksDB storage, gRPC on free loopback ports) and the real client. */
class CounterClusterTest {

    @TempDir
    Path dir;

    private final List<CounterServer> servers = new ArrayList<>();
    private List<PeerId> peers;
    private ClusterChannels channels;

    @BeforeEach
    void startCluster() throws Exception {
        peers = LocalCluster.freePorts(3).stream().map(p -> new PeerId("127.0.0.1", p)).toList();
        for (int i = 0; i < 3; i++) {
            servers.add(CounterServer.start(new CounterServer.Settings(dir.resolve("n" + i), peers.get(i), peers, 300, 0),
                    new SimpleMeterRegistry()));
        }
        channels = new ClusterChannels(Addresses.endpoints(peers));
    }

    @AfterEach
    void stopCluster() {
        channels.close();
        servers.forEach(CounterServer::close);
    }

    private CounterServer awaitLeader() throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline) {
            Optional<CounterServer> l = servers.stream().filter(s -> s.status().role() == Role.LEADER).findFirst();
            if (l.isPresent()) {
                return l.get();
            }
            Thread.sleep(5); // bounded poll for the condition above
        }
        throw new AssertionError("no leader within 20 s");
    }

    @Test
    void incrementsAndReadsFindTheLeaderThemselves() {
        CounterClient client = new CounterClient(channels, 10_000, 1_000);
        assertEquals(5, client.incr(5).value());
        CounterClient.Outcome second = client.incr(-2);
        assertTrue(second.ok(), second.line());
        assertEquals(3, second.value());
        assertEquals("ok 3", client.get().line());
    }

    @Test
    void aRetriedIncrementIsAppliedOnceWithoutDedupInTheCounter() throws Exception {
        CounterServer leader = awaitLeader();
        String endpoint = peers.get(servers.indexOf(leader)).endpoint();
        ClientReply first = sendIncrement(endpoint, "client-a", 1, 7);
        assertEquals(Outcome.OUTCOME_OK, first.getOutcome(), first.getMessage());
        assertEquals(7, CounterStateMachine.decodeValue(first.getResult().toByteArray()));
        // The same client id and sequence again: a retry, answered from the library's retry table.
        ClientReply retry = sendIncrement(endpoint, "client-a", 1, 7);
        assertEquals(first.getResult(), retry.getResult());
        assertEquals("ok 7", new CounterClient(channels, 10_000, 1_000).get().line());
        CounterServer follower = servers.stream().filter(s -> s != leader).findFirst().orElseThrow();
        ClientReply refused = sendIncrement(peers.get(servers.indexOf(follower)).endpoint(), "client-b", 1, 1);
        assertEquals(Outcome.OUTCOME_NOT_LEADER, refused.getOutcome());
        assertEquals(endpoint, refused.getLeaderHint());
    }

    /** One increment straight on the client service's stream, as a retrying client would send it. */
    private static ClientReply sendIncrement(String endpoint, String clientId, long sequence, long delta) throws Exception {
        io.grpc.ManagedChannel channel = io.wheelraft.rpc.RaftChannels.open(endpoint, io.wheelraft.rpc.RpcOptions.defaults());
        try {
            java.util.concurrent.CompletableFuture<ClientReply> reply = new java.util.concurrent.CompletableFuture<>();
            StreamObserver<ClientCalls> calls = RaftClientServiceGrpc.newStub(channel).calls(new StreamObserver<>() {
                @Override
                public void onNext(ClientReplies r) {
                    reply.complete(r.getReplies(0));
                }

                @Override
                public void onError(Throwable t) {
                    reply.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                }
            });
            calls.onNext(ClientCalls.newBuilder().addCalls(ClientCall.newBuilder().setCallId(1).setGroupId(CounterServiceImpl.GROUP_ID)
                    .setCommand(Command.newBuilder().setClientId(clientId).setSequence(sequence).setFirstUnacked(sequence)
                            .setPayload(com.google.protobuf.ByteString.copyFrom(CounterStateMachine.encode(delta))))).build());
            ClientReply r = reply.get(20, TimeUnit.SECONDS);
            calls.onCompleted();
            return r;
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void keepsCountingAfterTheLeaderStops() throws Exception {
        CounterClient client = new CounterClient(channels, 15_000, 1_000);
        for (int i = 0; i < 20; i++) {
            assertTrue(client.incr(1).ok());
        }
        CounterServer leader = awaitLeader();
        leader.close();
        for (int i = 0; i < 20; i++) {
            CounterClient.Outcome o = client.incr(1);
            assertTrue(o.ok(), o.line());
        }
        assertEquals("ok 40", client.get().line());
    }

    @Test
    void interactiveClientAnswersEveryLineInOrder() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        java.io.InputStream previous = ClientCommand.input;
        ClientCommand.input = new ByteArrayInputStream("incr 2\nget\nincr\nbogus\nincr x\n\nget\n".getBytes(StandardCharsets.UTF_8));
        try {
            int code = Main.run(new String[] {"client", "--peers", String.join(",", Addresses.endpoints(peers)), "--interactive"},
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            assertEquals(0, code);
        } finally {
            ClientCommand.input = previous;
        }
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(7, lines.length, out.toString(StandardCharsets.UTF_8));
        assertEquals("ok 2", lines[0]);
        assertEquals("ok 2", lines[1]);
        assertEquals("ok 3", lines[2]);
        assertTrue(lines[3].startsWith("fail unknown client command 'bogus'"), lines[3]);
        assertTrue(lines[4].startsWith("fail DELTA 'x'"), lines[4]);
        assertTrue(lines[5].startsWith("fail empty command"), lines[5]);
        assertEquals("ok 3", lines[6]);
    }

    @Test
    void oneShotClientPrintsTheValueAndStatusPrintsOneLinePerPeer() throws Exception {
        awaitLeader();
        String list = String.join(",", Addresses.endpoints(peers));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(0, Main.run(new String[] {"client", "--peers", list, "incr", "4"}, o, e));
        assertEquals("4\n", out.toString(StandardCharsets.UTF_8));
        out.reset();
        assertEquals(0, Main.run(new String[] {"status", "--peers", list}, o, e));
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(3, lines.length);
        for (int i = 0; i < 3; i++) {
            assertTrue(lines[i].matches(java.util.regex.Pattern.quote(peers.get(i).endpoint())
                    + " (leader|follower|candidate) term=\\d+ commit=\\d+ last=\\d+ leader=(\\S+:\\d+|none)"), lines[i]);
        }
        assertEquals(1, out.toString(StandardCharsets.UTF_8).split(" leader term=", -1).length - 1);
    }

}
