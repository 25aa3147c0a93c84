package io.wheelraft.example;

import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.rpc.AdminClient;
import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three real {@code server --groups 20} processes (gRPC, RocksDB) driven through the command line:
 * every group elects one leader and then goes quiet on every process, a write to group G lands in
 * G only (and G goes quiet again), reads of a quiet group leave it quiet, {@code status --groups}
 * prints the contract's lines, and a
 * SIGKILLed process is {@code down} while the others take over the groups it led and then go
 * quiet without it.
 */
class ManyGroupsIT {

    private static final int GROUPS = 20;
    private static final Pattern LINE = Pattern.compile("(\\S+) groups=(\\d+) leaders=(\\d+) quiet=(\\d+)");

    @TempDir
    Path dir;

    private final List<ServerProcess> servers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (ServerProcess s : servers) {
            s.kill();
        }
    }

    private record Result(int code, String out, String err) {
    }

    private static Result cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The leaders that {@code status --groups} reports in total (-1 if a line is not as the contract says). */
    private static int leadersReported(String peers, int expectedLines) {
        return reported(peers, expectedLines, 3);
    }

    /** The quiet replicas that {@code status --groups} reports in total (-1 if a line is not as the contract says). */
    private static int quietReported(String peers, int expectedLines) {
        return reported(peers, expectedLines, 4);
    }

    private static int reported(String peers, int expectedLines, int field) {
        Result r = cli("status", "--peers", peers, "--groups", "--timeout-ms", "2000");
        String[] lines = r.out().strip().split("\n");
        if (lines.length != expectedLines) {
            return -1;
        }
        int total = 0;
        for (String line : lines) {
            Matcher m = LINE.matcher(line);
            if (m.matches()) {
                total += Integer.parseInt(m.group(field));
            }
        }
        return total;
    }

    @Test
    void everyGroupElectsOneLeaderGoesQuietWritesStayInTheirGroupAndAKilledProcessIsDown() throws Exception {
        List<String> endpoints = LocalCluster.freePorts(3).stream().map(p -> "127.0.0.1:" + p).toList();
        String peers = String.join(",", endpoints);
        for (int i = 0; i < 3; i++) {
            ServerProcess s = new ServerProcess(endpoints.get(i), dir.resolve("n" + i), dir.resolve("n" + i + ".log"),
                    List.of("--peers", peers, "--groups", Integer.toString(GROUPS), "--election-timeout-ms", "500"), null);
            servers.add(s);
            s.start();
        }
        LocalCluster.await("a leader for every group", 60_000, () -> leadersReported(peers, 3) == GROUPS);
        LocalCluster.await("every replica of every group quiet", 60_000, () -> quietReported(peers, 3) == 3 * GROUPS);

        Result status = cli("status", "--peers", peers, "--groups");
        assertEquals(0, status.code(), status.err());
        String[] lines = status.out().strip().split("\n");
        assertEquals(3, lines.length, status.out());
        for (int i = 0; i < 3; i++) {
            Matcher m = LINE.matcher(lines[i]);
            assertTrue(m.matches(), lines[i]);
            assertEquals(endpoints.get(i), m.group(1), "lines in the order of --peers");
            assertEquals(Integer.toString(GROUPS), m.group(2));
            assertEquals(Integer.toString(GROUPS), m.group(4), "every replica quiet");
        }
        // Without --groups, status asks for the single counter, which these servers do not host:
        // each line says so instead of calling a server that answered unreachable.
        Result single = cli("status", "--peers", peers, "--timeout-ms", "2000");
        assertEquals(1, single.code(), single.err());
        assertTrue(single.err().contains("hosts the single counter") && single.err().contains("status --groups"), single.err());
        String[] singleLines = single.out().strip().split("\n");
        assertEquals(3, singleLines.length, single.out());
        for (int i = 0; i < 3; i++) {
            assertEquals(endpoints.get(i) + " down (answers, but hosts no single counter: a server started with --groups N? use status --groups)",
                    singleLines[i]);
        }
        // exactly one leader per group, as each replica reports it
        try (var a0 = new AdminClient(endpoints.get(0), RpcOptions.defaults());
             var a1 = new AdminClient(endpoints.get(1), RpcOptions.defaults());
             var a2 = new AdminClient(endpoints.get(2), RpcOptions.defaults())) {
            for (int g = 0; g < GROUPS; g++) {
                int leaders = 0;
                for (AdminClient a : List.of(a0, a1, a2)) {
                    NodeStatusResponse s = a.status(Integer.toString(g), "", 5_000);
                    leaders += s.getRole().equals("leader") ? 1 : 0;
                }
                assertEquals(1, leaders, "leaders of group " + g);
            }
        }

        Result incr = cli("client", "--peers", peers, "--group", "7", "incr", "5");
        assertEquals(0, incr.code(), incr.err());
        assertEquals("5", incr.out().strip());
        for (int g = 0; g < GROUPS; g++) {
            Result get = cli("client", "--peers", peers, "--group", Integer.toString(g), "get");
            assertEquals(0, get.code(), get.err());
            assertEquals(g == 7 ? "5" : "0", get.out().strip(), "group " + g);
        }

        LocalCluster.await("group 7 quiet again after the writes and reads", 60_000, () -> quietReported(peers, 3) == 3 * GROUPS);
        // A linearizable read does not wake a quiet group: its replicas are all still quiet right
        // after reads (a woken group stays awake at least a heartbeat interval after its last one).
        for (int k = 0; k < 10; k++) {
            Result get = cli("client", "--peers", peers, "--group", "7", "get");
            assertEquals("5", get.out().strip(), get.err());
        }
        assertEquals(3 * GROUPS, quietReported(peers, 3), "linearizable reads woke their quiet group");

        servers.get(2).kill();
        LocalCluster.await("the groups the killed process led led by the others", 60_000, () -> leadersReported(peers, 3) == GROUPS);
        // With one process down, every group still goes quiet on the two that are left.
        LocalCluster.await("every group quiet on the live processes", 60_000, () -> quietReported(peers, 3) == 2 * GROUPS);
        Result after = cli("status", "--peers", peers, "--groups");
        assertEquals(0, after.code(), after.err());
        assertEquals(endpoints.get(2) + " down", after.out().strip().split("\n")[2]);
        Result again = cli("client", "--peers", peers, "--group", "7", "incr", "1");
        assertEquals("6", again.out().strip(), again.err());
        assertTrue(Files.size(dir.resolve("n0.log")) > 0);
    }
}
