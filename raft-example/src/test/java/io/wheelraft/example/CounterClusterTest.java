package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
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
