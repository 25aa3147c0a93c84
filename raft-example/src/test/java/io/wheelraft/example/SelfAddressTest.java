package io.wheelraft.example;

import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SelfAddressTest {

    private static final Map<String, String> HOSTS = Map.of("localhost", "127.0.0.1", "127.0.0.1", "127.0.0.1",
            "node-a", "10.0.0.5", "10.0.0.5", "10.0.0.5", "node-b", "10.0.0.6");

    private static final SelfAddress.Resolver FAKE = host -> {
        String ip = HOSTS.get(host.toLowerCase(java.util.Locale.ROOT));
        if (ip == null) {
            throw new UnknownHostException(host);
        }
        return List.of(InetAddress.getByName(ip));
    };

    private static List<PeerId> peers(String... p) {
        return Addresses.parseList("--peers", String.join(",", p));
    }

    @Test
    void aListedSelfIsAMember() {
        assertEquals(SelfAddress.Membership.LISTED, SelfAddress.check(PeerId.parse("node-a:7001"), peers("node-a:7001", "node-b:7001"), FAKE));
    }

    @Test
    void aSelfNotListedAtAllKeepsItsMeaning() {
        assertEquals(SelfAddress.Membership.NOT_LISTED,
                SelfAddress.check(PeerId.parse("node-b:7004"), peers("node-a:7001", "node-a:7002"), FAKE));
        assertEquals(SelfAddress.Membership.NOT_LISTED,
                SelfAddress.check(PeerId.parse("unresolvable:7001"), peers("node-a:7001"), FAKE), "unknown names are not guessed at");
    }

    @Test
    void theSameNodeSpelledAnotherWayIsRefusedShowingBothSpellings() {
        CliException e = assertThrows(CliException.class,
                () -> SelfAddress.check(PeerId.parse("localhost:7001"), peers("127.0.0.1:7001", "127.0.0.1:7002"), FAKE));
        assertEquals(CliException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("localhost:7001") && e.getMessage().contains("127.0.0.1:7001"), e.getMessage());
        assertTrue(e.getMessage().contains("--self 127.0.0.1:7001"), "says what to do: " + e.getMessage());
        CliException byName = assertThrows(CliException.class,
                () -> SelfAddress.check(PeerId.parse("10.0.0.5:7001"), peers("node-a:7001", "node-b:7001"), FAKE));
        assertTrue(byName.getMessage().contains("both resolve to 10.0.0.5"), byName.getMessage());
        assertThrows(CliException.class, () -> SelfAddress.check(PeerId.parse("NODE-A:7001"), peers("node-a:7001"), FAKE));
    }

    @Test
    void theNotListedLineNamesTheNodeThePeersAndWhatToDo() {
        String line = SelfAddress.notListedLine(PeerId.parse("node-b:7004"), peers("node-a:7001", "node-a:7002"));
        assertTrue(line.contains("--self node-b:7004 is not in --peers node-a:7001,node-a:7002"), line);
        assertTrue(line.contains("add-peer node-b:7004"), line);
        assertTrue(!line.contains("\n"));
    }

    @Test
    void serverRefusesLocalhostForAListed127001WithExitTwo() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"server", "--data", "never-created", "--self", "localhost:7001",
                "--peers", "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String e = err.toString(StandardCharsets.UTF_8).strip();
        assertEquals(2, code, e);
        assertEquals(1, e.split("\n").length, e);
        assertTrue(e.contains("localhost:7001") && e.contains("127.0.0.1:7001"), e);
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }
}
