package io.wheelraft.example;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two data nodes and a witness as real {@code server} processes ({@code --witnesses} naming the
 * third): writes, then each data node in turn killed with SIGKILL while writes go on through the
 * other data node and the witness, then restarted and caught up; nothing acknowledged is lost,
 * and the witness's data directory is far smaller than a data node's (both sizes printed). Runs
 * in {@code mvn verify} (failsafe).
 */
class WitnessIT {

    private static final int ELECTION_TIMEOUT_MS = 300;
    private static final int WRITES_PER_STEP = 200;
    /** Generous: the servers share two cores with the build. */
    private static final long STEP_TIMEOUT_MS = 60_000;

    private LocalCluster cluster;
    private long acked;
    private long unknown;

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void twoDataNodesAndAWitnessSurviveTheLossOfEitherDataNode() throws Exception {
        Path base = Path.of("target", "witness-it").toAbsolutePath();
        ChaosRunner.deleteRecursively(base);
        cluster = new LocalCluster(Files.createDirectories(base), 3, 1, ELECTION_TIMEOUT_MS, 0);
        String witness = cluster.witnesses().get(0);
        List<String> data = cluster.endpoints().stream().filter(e -> !e.equals(witness)).toList();
        cluster.startAll();
        LocalCluster.NodeView leader = cluster.awaitLeader(cluster.endpoints(), 0, STEP_TIMEOUT_MS);
        assertNotEquals(witness, leader.endpoint(), "a witness never leads");
        CounterClient client = new CounterClient(cluster.channels(), 10_000, 1_000);
        write(client, WRITES_PER_STEP);

        String statusLine = status(witness);
        assertTrue(statusLine.startsWith(witness + " witness term="), statusLine);

        for (String victim : data) {
            LocalCluster.NodeView before = cluster.awaitLeader(cluster.endpoints(), 0, STEP_TIMEOUT_MS);
            cluster.server(victim).kill();
            // The other data node and the witness form the quorum; if the victim led, the data node takes over.
            String survivor = data.stream().filter(e -> !e.equals(victim)).findFirst().orElseThrow();
            LocalCluster.NodeView now = cluster.awaitLeader(List.of(survivor), victim.equals(before.endpoint()) ? before.term() : 0,
                    STEP_TIMEOUT_MS);
            assertEquals(survivor, now.endpoint());
            write(client, WRITES_PER_STEP);

            long committed = cluster.view(survivor, 5_000).orElseThrow().commit();
            cluster.server(victim).start();
            cluster.awaitCaughtUp(victim, committed, STEP_TIMEOUT_MS);
            cluster.awaitCaughtUp(witness, committed, STEP_TIMEOUT_MS);
        }
        write(client, WRITES_PER_STEP);

        CounterClient.Outcome value = new CounterClient(cluster.channels(), 10_000, 1_000).get();
        assertTrue(value.ok(), value.line());
        assertTrue(value.value() >= acked && value.value() <= acked + unknown,
                "counter " + value.value() + " after " + acked + " acknowledged and " + unknown + " unknown increments");

        // Most of either directory is the pre-sized write-ahead log (a witness's is sized for
        // headers), so the rest is printed apart: SSTs, snapshots, meta.
        Path witnessDir = cluster.server(witness).dataDir();
        long witnessBytes = bytesUnder(witnessDir);
        System.out.printf("data directory sizes after %d writes: witness %s %,d bytes (%,d without the write-ahead log)", acked, witness,
                witnessBytes, witnessBytes - walBytes(witnessDir));
        for (String d : data) {
            Path dir = cluster.server(d).dataDir();
            long bytes = bytesUnder(dir);
            System.out.printf("; data node %s %,d bytes (%,d without the write-ahead log)", d, bytes, bytes - walBytes(dir));
            assertTrue(witnessBytes < bytes, "the witness holds " + witnessBytes + " bytes, data node " + d + " " + bytes);
        }
        System.out.println();
    }

    /** {@code n} increments of 1, one after another; each must be acknowledged (an unknown outcome is counted and retried). */
    private void write(CounterClient client, int n) {
        int done = 0;
        long deadline = System.nanoTime() + STEP_TIMEOUT_MS * 1_000_000;
        while (done < n) {
            assertTrue(System.nanoTime() < deadline, "only " + done + " of " + n + " writes acknowledged within " + STEP_TIMEOUT_MS + " ms");
            CounterClient.Outcome o = client.incr(1);
            if (o.ok()) {
                acked++;
                done++;
            } else if (o.kind() == CounterClient.Outcome.Kind.UNKNOWN) {
                unknown++;
            }
        }
    }

    private static String status(String endpoint) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Main.run(new String[] {"status", "--peers", endpoint}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8).strip();
    }

    /** RocksDB's write-ahead log files (log/*.log) under a data directory. */
    private static long walBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve("log"))) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static long bytesUnder(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }
}
