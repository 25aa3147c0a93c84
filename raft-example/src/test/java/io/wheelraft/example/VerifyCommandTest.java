package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code verify} on the data directory of a real (in-process, one-member) counter node, sound and
 * with bytes flipped in each kind of file.
 */
class VerifyCommandTest {

    @TempDir
    static Path shared;
    @TempDir
    Path dir;

    private static Path base;

    private record Result(int code, List<String> lines, String err) {
        String only(String prefix) {
            return lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse("(no line starting '" + prefix + "' in " + lines + ")");
        }
    }

    /** One node: 200 increments, a snapshot, a restart (which flushes the log into SST files), 50 more. */
    @BeforeAll
    static void buildDataDirectory() throws Exception {
        base = shared.resolve("node");
        int port = LocalCluster.freePorts(1).get(0);
        PeerId self = new PeerId("127.0.0.1", port);
        for (int round = 0; round < 2; round++) {
            try (CounterServer server = CounterServer.start(new CounterServer.Settings(base, self, List.of(self), 300, 0),
                    new SimpleMeterRegistry());
                 ClusterChannels channels = new ClusterChannels(List.of(self.endpoint()))) {
                awaitLeader(server);
                CounterClient client = new CounterClient(channels, 10_000, 2_000);
                for (int i = 0; i < (round == 0 ? 200 : 50); i++) {
                    assertTrue(client.incr(1).ok());
                }
                if (round == 0) {
                    CompletableFuture<Status> done = new CompletableFuture<>();
                    server.node().snapshot(done::complete);
                    assertTrue(done.get(10, TimeUnit.SECONDS).isOk());
                }
            }
        }
    }

    private static void awaitLeader(CounterServer server) throws Exception {
        LocalCluster.await("a single member becoming leader", 10_000, () -> server.status().role() == Role.LEADER);
    }

    private Path copy() throws IOException {
        Path target = dir.resolve("copy");
        try (Stream<Path> walk = Files.walk(base)) {
            for (Path p : walk.toList()) {
                Path to = target.resolve(base.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(to);
                } else if (!p.getFileName().toString().equals("LOCK")) {
                    Files.copy(p, to);
                }
            }
        }
        return target;
    }

    private static Result verify(Path data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"verify", "--data", data.toString()}, new PrintStream(out), new PrintStream(err));
        return new Result(code, out.toString(StandardCharsets.UTF_8).lines().toList(), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aSoundDirectoryPassesEveryCheckAndChangesNothing() throws IOException {
        Path data = copy();
        Result r = verify(data);
        assertEquals(0, r.code(), r.lines() + r.err());
        assertTrue(r.lines().get(r.lines().size() - 1).startsWith("sound: "), r.lines().toString());
        assertTrue(r.lines().stream().limit(r.lines().size() - 1).allMatch(l -> l.startsWith("ok ")), r.lines().toString());
        assertTrue(r.only("ok log group 'counter'").contains("every checksum verified"), r.lines().toString());
        assertTrue(r.only("ok snapshot").contains("index "), r.lines().toString());
        assertTrue(r.only("ok sst").contains("SST files verified"), r.lines().toString());
        assertEquals(0, verify(data).code(), "verifying twice: the first run changed nothing");
    }

    @Test
    void flippedWalRecordsAreReported() throws IOException {
        Path data = copy();
        Path wal = largest(data.resolve("log"), ".log");
        DiskFaults.flip(wal, Math.min(1_000, Files.size(wal) / 2), 64);
        Result r = verify(data);
        assertEquals(1, r.code(), r.lines().toString());
        assertTrue(r.only("DAMAGED wal").contains(wal.toString()), r.lines().toString());
        assertTrue(r.lines().get(r.lines().size() - 1).startsWith("DAMAGED: "), r.lines().toString());
    }

    @Test
    void flippedSstBlockIsReported() throws IOException {
        Path data = copy();
        Path sst = largest(data.resolve("log"), ".sst");
        DiskFaults.flip(sst, Files.size(sst) / 2, 64);
        Result r = verify(data);
        assertEquals(1, r.code(), r.lines().toString());
        assertTrue(r.only("DAMAGED sst").contains(sst.getFileName().toString()), r.lines().toString());
    }

    @Test
    void flippedMetaIsReported() throws IOException {
        Path data = copy();
        Path meta = data.resolve("counter/meta/raft_meta");
        // Both slots of the two-slot file: one damaged slot alone falls back to the other record.
        DiskFaults.flip(meta, Files.size(meta) / 2 - 2, 1);
        DiskFaults.flip(meta, Files.size(meta) - 2, 1);
        Result r = verify(data);
        assertEquals(1, r.code(), r.lines().toString());
        assertTrue(r.only("DAMAGED meta").contains(meta.toString()), r.lines().toString());
    }

    @Test
    void missingMetaNextToALogIsReported() throws IOException {
        Path data = copy();
        Files.delete(data.resolve("counter/meta/raft_meta"));
        Result r = verify(data);
        assertEquals(1, r.code(), r.lines().toString());
        assertTrue(r.only("DAMAGED meta").contains("missing while the log holds entries"), r.lines().toString());
    }

    @Test
    void flippedSnapshotFileIsReported() throws IOException {
        Path data = copy();
        Path file;
        try (Stream<Path> walk = Files.walk(data.resolve("counter/snapshot"))) {
            file = walk.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith("__")).findFirst().orElseThrow();
        }
        DiskFaults.flip(file, 0, 4);
        Result r = verify(data);
        assertEquals(1, r.code(), r.lines().toString());
        assertTrue(r.only("DAMAGED snapshot").contains(file.toString()), r.lines().toString());
    }

    @Test
    void aDirectoryWithoutNodeDataIsBadUsage() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        Result r = verify(empty);
        assertEquals(2, r.code());
        assertTrue(r.err().contains("holds no node data"), r.err());
        assertEquals(2, verify(dir.resolve("missing")).code());
    }

    private static Path largest(Path dir, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(suffix)).max(Comparator.comparingLong(VerifyCommandTest::size)).orElseThrow();
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
