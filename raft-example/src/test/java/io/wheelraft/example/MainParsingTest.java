package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Command-line parsing of every subcommand: bad input is one line on standard error and a non-zero exit, never a stack trace. */
class MainParsingTest {

    private record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Exactly one line on standard error, mentioning {@code needle}, no stack trace, nothing on standard output. */
    private static void assertOneLineError(Result r, int code, String needle) {
        assertEquals(code, r.code(), r.err());
        assertEquals("", r.out());
        String[] lines = r.err().strip().split("\n");
        assertEquals(1, lines.length, "expected one line, got: " + r.err());
        assertTrue(lines[0].startsWith("wheelraft-counter: "), lines[0]);
        assertTrue(lines[0].contains(needle), lines[0] + " should mention " + needle);
        assertFalse(r.err().contains("\tat "), "stack trace printed: " + r.err());
    }

    @Test
    void unknownSubcommandIsUsageError() {
        assertOneLineError(run("frobnicate"), 2, "frobnicate");
    }

    @Test
    void noSubcommandIsUsageError() {
        assertOneLineError(run(), 2, "subcommand is required");
    }

    @Test
    void serverRejectsMalformedSelf() {
        assertOneLineError(run("server", "--data", "d", "--self", "localhost", "--peers", "a:1"), 2, "--self 'localhost'");
    }

    @Test
    void serverRejectsPortOutOfRange() {
        assertOneLineError(run("server", "--data", "d", "--self", "h:70000", "--peers", "h:70000"), 2, "70000");
    }

    @Test
    void serverRejectsMalformedPeerList() {
        assertOneLineError(run("server", "--data", "d", "--self", "h:1", "--peers", "h:1,,h:2"), 2, "empty entry");
        assertOneLineError(run("server", "--data", "d", "--self", "h:1", "--peers", "h:1,h:x"), 2, "'x'");
        assertOneLineError(run("server", "--data", "d", "--self", "h:1", "--peers", "h:1,h:1"), 2, "twice");
    }

    @Test
    void serverRequiresItsOptions() {
        assertOneLineError(run("server", "--self", "h:1"), 2, "--data");
    }

    @Test
    void serverRejectsNonNumericTimeout() {
        assertOneLineError(run("server", "--data", "d", "--self", "h:1", "--peers", "h:1", "--election-timeout-ms", "soon"), 2, "soon");
    }

    @Test
    void serverRejectsDataDirThatIsNotWritable(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "not a directory");
        int port = LocalCluster.freePorts(1).get(0);
        String self = "127.0.0.1:" + port;
        assertOneLineError(run("server", "--data", file.resolve("data").toString(), "--self", self, "--peers", self), 1, "data directory");
    }

    @Test
    void serverRejectsPortInUse(@TempDir Path tmp) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String self = "127.0.0.1:" + taken.getLocalPort();
            assertOneLineError(run("server", "--data", tmp.resolve("d").toString(), "--self", self, "--peers", self), 1, "already in use");
        }
    }

    @Test
    void clientNeedsACommand() {
        assertOneLineError(run("client", "--peers", "127.0.0.1:1"), 2, "needs a command");
    }

    @Test
    void clientRejectsUnknownCommandAndBadDelta() {
        assertOneLineError(run("client", "--peers", "127.0.0.1:1", "decr"), 2, "decr");
        assertOneLineError(run("client", "--peers", "127.0.0.1:1", "incr", "lots"), 2, "lots");
        assertOneLineError(run("client", "--peers", "127.0.0.1:1", "get", "x"), 2, "'get' takes no argument");
    }

    @Test
    void clientRejectsInteractiveWithACommand() {
        assertOneLineError(run("client", "--peers", "127.0.0.1:1", "--interactive", "get"), 2, "--interactive");
    }

    @Test
    void clientRejectsMalformedPeers() {
        assertOneLineError(run("client", "--peers", "nowhere", "get"), 2, "'nowhere'");
    }

    @Test
    void clientAgainstAnUnreachableClusterFailsWithExitOne() throws Exception {
        int port = LocalCluster.freePorts(1).get(0);
        Result r = run("client", "--peers", "127.0.0.1:" + port, "--timeout-ms", "300", "incr");
        assertOneLineError(r, 1, "cluster unreachable");
    }

    @Test
    void statusOfAnUnreachableClusterPrintsDownLinesAndExitsOne() throws Exception {
        var ports = LocalCluster.freePorts(2);
        Result r = run("status", "--peers", "127.0.0.1:" + ports.get(0) + ",127.0.0.1:" + ports.get(1), "--timeout-ms", "300");
        assertEquals(1, r.code());
        assertEquals("127.0.0.1:" + ports.get(0) + " down (unreachable)\n"
                + "127.0.0.1:" + ports.get(1) + " down (unreachable)\n", r.out());
        assertTrue(r.err().contains("no node"), r.err());
    }

    @Test
    void adminRejectsUnknownOperationAndMalformedTarget() {
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "promote", "127.0.0.1:2"), 2, "promote");
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "add-peer", "127.0.0.1"), 2, "'127.0.0.1'");
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "add-peer"), 2, "HOST:PORT");
    }

    @Test
    void serverRejectsAWitnessNotAmongThePeers() {
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
                "--witnesses", "127.0.0.1:4"), 2, "--witnesses names 127.0.0.1:4, which is not among --peers");
        // spelt another way than in --peers: Raft tells members apart by spelling
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
                "--witnesses", "localhost:3"), 2, "spelt the same way");
    }

    @Test
    void serverRejectsMalformedRepeatedOrAllWitnesses() {
        String peers = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--witnesses", "127.0.0.1"), 2,
                "--witnesses '127.0.0.1'");
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--witnesses", "127.0.0.1:3,127.0.0.1:3"),
                2, "twice");
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1,127.0.0.1:2",
                "--witnesses", "127.0.0.1:1,127.0.0.1:2"), 2, "at least one member must not be a witness");
    }

    @Test
    void serverRejectsANegativePriorityAndAPriorityForAWitness() {
        String peers = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--priority", "-1"), 2,
                "--priority must be 0 (never leads) or more, was -1");
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--priority", "x"), 2, "'x'");
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:3", "--peers", peers, "--witnesses", "127.0.0.1:3",
                "--priority", "5"), 2, "a witness, which never leads");
    }

    @Test
    void serverRefusesWitnessesAndPriorityWithGroups() {
        String peers = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--groups", "10", "--priority", "2"), 2,
                "not supported with --groups");
        assertOneLineError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", peers, "--groups", "10",
                "--witnesses", "127.0.0.1:3"), 2, "not supported with --groups");
    }

    @Test
    void adminChecksSetPriorityArguments() {
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "set-priority", "127.0.0.1:2"), 2, "set-priority HOST:PORT N");
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "set-priority", "127.0.0.1:2", "high"), 2, "'high'");
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "set-priority", "127.0.0.1:2", "-3"), 2, "0 (never leads) or more");
        assertOneLineError(run("admin", "--peers", "127.0.0.1:1", "add-witness", "127.0.0.1:2", "5"), 2, "one argument too many");
    }

    @Test
    void adminAgainstAnUnreachableClusterFails() throws Exception {
        int port = LocalCluster.freePorts(1).get(0);
        assertOneLineError(run("admin", "--peers", "127.0.0.1:" + port, "remove-peer", "127.0.0.1:1"), 1, "unreachable");
    }

    @Test
    void benchRejectsBadNumbers() {
        assertOneLineError(run("bench", "--peers", "127.0.0.1:1", "--concurrency", "0"), 2, "--concurrency");
        assertOneLineError(run("bench", "--peers", "127.0.0.1:1", "--duration", "x"), 2, "'x'");
        assertOneLineError(run("bench", "--peers", "127.0.0.1:1", "--every-ms", "5"), 2, "--every-ms must be at least 10");
    }

    @Test
    void chaosRejectsUnknownModeAndBadRounds() {
        assertOneLineError(run("chaos", "--mode", "kill-everything"), 2, "kill-everything");
        assertOneLineError(run("chaos", "--rounds", "0"), 2, "--rounds");
        assertOneLineError(run("chaos", "--election-timeout-ms", "-5"), 2, "--election-timeout-ms");
    }

    @Test
    void demoRejectsUnknownOption() {
        assertOneLineError(run("demo", "--fast"), 2, "--fast");
    }

    @Test
    void helpGoesToStandardOutputWithExitZero() {
        Result r = run("--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("server") && r.out().contains("chaos"), r.out());
    }
}
