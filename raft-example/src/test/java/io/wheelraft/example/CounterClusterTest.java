package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.grpc.stub.StreamObserver;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.CounterServiceGrpc;
import io.wheelraft.rpc.proto.counter.IncrCall;
import io.wheelraft.rpc.proto.counter.IncrCalls;
import io.wheelraft.rpc.proto.counter.IncrReplies;
import io.wheelraft.rpc.proto.counter.IncrReply;
import io.wheelraft.rpc.proto.counter.IncrRequest;
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
import java.util.concurrent.CountDownLatch;
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
    void sameClientIdAndSequenceIsAppliedOnce() {
        CounterClient first = new CounterClient(channels, "client-a", 10_000, 1_000);
        CounterClient retryOfFirst = new CounterClient(channels, "client-a", 10_000, 1_000);
        assertEquals(7, first.incr(7).value());
        // The second client shares the id and starts at sequence 1 too: a retry of the same command.
        CounterClient.Outcome retry = retryOfFirst.incr(7);
        assertEquals("ok 7", retry.line());
        assertEquals("ok 7", new CounterClient(channels, 10_000, 1_000).get().line());
    }

    @Test
    void incrStreamAnswersEveryCallByItsIdAndEndsAfterTheLast() throws Exception {
        CounterServer leader = awaitLeader();
        CounterServer follower = servers.stream().filter(s -> s != leader).findFirst().orElseThrow();
        StreamRecorder toLeader = new StreamRecorder();
        var calls = CounterServiceGrpc.newStub(channels.channel(peers.get(servers.indexOf(leader)).endpoint())).incrStream(toLeader);
        int n = 50;
        IncrCalls.Builder batch = IncrCalls.newBuilder();
        for (int i = 1; i <= n; i++) {
            // Distinct sessions, all in flight at once; call ids deliberately not in send order;
            // some in one message, the rest one per message.
            IncrCall call = IncrCall.newBuilder().setCallId(1000 + n - i).setRequest(IncrRequest.newBuilder()
                    .setClientId("stream-" + i).setSequence(1).setDelta(2)).build();
            if (i <= n / 2) {
                batch.addCalls(call);
            } else {
                calls.onNext(IncrCalls.newBuilder().addCalls(call).build());
            }
        }
        calls.onNext(batch.build());
        // A retry of session 1's command on the same stream is answered, not applied again.
        calls.onNext(IncrCalls.newBuilder().addCalls(IncrCall.newBuilder().setCallId(7).setRequest(IncrRequest.newBuilder()
                .setClientId("stream-1").setSequence(1).setDelta(2))).build());
        calls.onCompleted();
        assertTrue(toLeader.done.await(20, TimeUnit.SECONDS), "the stream ends once every call is answered");
        assertEquals(null, toLeader.error);
        assertEquals(n + 1, toLeader.replies.size());
        java.util.Set<Long> values = new java.util.TreeSet<>();
        java.util.Map<Long, Long> byCall = new java.util.HashMap<>();
        for (IncrReply r : toLeader.replies) {
            assertEquals(CounterOutcome.COUNTER_OUTCOME_OK, r.getResponse().getOutcome(), r.toString());
            assertEquals(null, byCall.put(r.getCallId(), r.getResponse().getValue()), "one answer per call id");
        }
        for (int i = 1; i <= n; i++) {
            values.add(byCall.get(1000L + n - i));
        }
        assertEquals(n, values.size(), "every increment applied once, each seeing its own value");
        assertEquals(2L * n, (long) java.util.Collections.max(values));
        assertEquals(byCall.get(1000L + n - 1), byCall.get(7L), "the retry gets the first answer");

        StreamRecorder toFollower = new StreamRecorder();
        var followerCalls = CounterServiceGrpc.newStub(channels.channel(peers.get(servers.indexOf(follower)).endpoint())).incrStream(toFollower);
        followerCalls.onNext(IncrCalls.newBuilder().addCalls(IncrCall.newBuilder().setCallId(1).setRequest(IncrRequest.newBuilder()
                .setClientId("stream-x").setSequence(1).setDelta(1))).build());
        followerCalls.onCompleted();
        assertTrue(toFollower.done.await(20, TimeUnit.SECONDS));
        assertEquals(1, toFollower.replies.size());
        CounterResponse refused = toFollower.replies.get(0).getResponse();
        assertEquals(CounterOutcome.COUNTER_OUTCOME_NOT_LEADER, refused.getOutcome());
        assertEquals(peers.get(servers.indexOf(leader)).endpoint(), refused.getLeaderHint());
        assertEquals("ok " + (2L * n), new CounterClient(channels, 10_000, 1_000).get().line());
    }

    /** Collects the answers of one IncrStream. */
    private static final class StreamRecorder implements StreamObserver<IncrReplies> {
        final List<IncrReply> replies = new java.util.concurrent.CopyOnWriteArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        volatile Throwable error;

        @Override
        public void onNext(IncrReplies value) {
            replies.addAll(value.getRepliesList());
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done.countDown();
        }

        @Override
        public void onCompleted() {
            done.countDown();
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
