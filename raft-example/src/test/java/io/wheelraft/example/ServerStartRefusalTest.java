package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node whose raft meta is damaged or missing next to its log refuses to start with one line and exit 1. */
class ServerStartRefusalTest {

    @TempDir
    Path dir;

    private record Result(int code, String err) {
    }

    /** One node that committed a few entries, stopped. */
    private PeerId nodeWithALog() throws Exception {
        PeerId self = new PeerId("127.0.0.1", LocalCluster.freePorts(1).get(0));
        try (CounterServer server = CounterServer.start(new CounterServer.Settings(dir, self, List.of(self), 300, 0), new SimpleMeterRegistry());
             ClusterChannels channels = new ClusterChannels(List.of(self.endpoint()))) {
            LocalCluster.await("a single member becoming leader", 10_000, () -> server.status().role() == Role.LEADER);
            CounterClient client = new CounterClient(channels, 10_000, 2_000);
            for (int i = 0; i < 5; i++) {
                assertTrue(client.incr(1).ok());
            }
        }
        return self;
    }

    private Result start(PeerId self) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // --exit-when-started: a node that wrongly starts returns 0 instead of running forever.
        int code = Main.run(new String[] {"server", "--data", dir.toString(), "--self", self.endpoint(), "--peers", self.endpoint(),
                "--exit-when-started"}, new PrintStream(out), new PrintStream(err));
        return new Result(code, err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aDamagedMetaIsRefusedWithOneLineThatSaysWhatToDo() throws Exception {
        PeerId self = nodeWithALog();
        Path meta = dir.resolve("counter/meta/raft_meta");
        byte[] bytes = Files.readAllBytes(meta);
        // Both slots of the two-slot file: one damaged slot alone falls back to the other record.
        bytes[bytes.length / 2 - 1] ^= 0x20;
        bytes[bytes.length - 1] ^= 0x20;
        Files.write(meta, bytes);
        Result r = start(self);
        assertEquals(1, r.code(), r.err());
        assertEquals(1, r.err().lines().count(), "one line: " + r.err());
        for (String part : List.of(meta.toString(), "damaged", "vote", "remove-peer", "add-peer", "docs/storage.md")) {
            assertTrue(r.err().contains(part), "names '" + part + "': " + r.err());
        }
    }

    @Test
    void aMissingMetaNextToALogIsRefusedWithOneLine() throws Exception {
        PeerId self = nodeWithALog();
        Files.delete(dir.resolve("counter/meta/raft_meta"));
        Result r = start(self);
        assertEquals(1, r.code(), r.err());
        assertEquals(1, r.err().lines().count(), "one line: " + r.err());
        assertTrue(r.err().contains("cannot start"), r.err());
    }

    @Test
    void aSoundNodeStillStarts() throws Exception {
        PeerId self = nodeWithALog();
        assertEquals(0, start(self).code());
    }
}
