package io.wheelraft.example;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code chaos --witness}: how the two data nodes and the witness are started, which follower each round kills, what the report says. */
class ChaosWitnessTopologyTest {

    private static final List<String> NODES = List.of("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3");

    @TempDir
    Path dir;

    @Test
    void everyServerOfAWitnessRunIsToldTheSameWitnessAmongItsPeers() {
        List<String> args = LocalCluster.serverArgs(NODES, List.of("127.0.0.1:3"), 300, 0);
        assertEquals(List.of("--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--election-timeout-ms", "300",
                "--snapshot-interval-secs", "0", "--witnesses", "127.0.0.1:3"), args);
        // without a witness, the options stay what they always were
        assertEquals(List.of("--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--election-timeout-ms", "300",
                "--snapshot-interval-secs", "0"), LocalCluster.serverArgs(NODES, List.of(), 300, 0));
    }

    @Test
    void killFollowerRoundsKillTheDataFollowerAndTheWitnessInTurn() {
        List<String> witness = List.of("127.0.0.1:3");
        assertEquals("127.0.0.1:2", ChaosRunner.followerVictim(1, NODES, witness, "127.0.0.1:1"));
        assertEquals("127.0.0.1:3", ChaosRunner.followerVictim(2, NODES, witness, "127.0.0.1:1"));
        assertEquals("127.0.0.1:1", ChaosRunner.followerVictim(3, NODES, witness, "127.0.0.1:2"));
        assertEquals("127.0.0.1:3", ChaosRunner.followerVictim(4, NODES, witness, "127.0.0.1:2"));
        // three data nodes: the first follower, as before
        assertEquals("127.0.0.1:2", ChaosRunner.followerVictim(2, NODES, List.of(), "127.0.0.1:1"));
    }

    @Test
    void theReportSaysTheTopology() {
        ChaosRunner.Settings s = new ChaosRunner.Settings(3, 1000, ChaosRunner.Mode.KILL_LEADER, dir, 16, 60, 3600, true);
        ChaosReport r = new ChaosReport(s, new ChaosReport.Measured(ChaosReportFixture.rounds(), 20, 0, 0, 20L, "", List.of(), 3, 4, 6, 31.5,
                Map.of("127.0.0.1:40001", "n1", "127.0.0.1:40002", "n2", "127.0.0.1:40003", "n3"), ChaosReportFixture.events(),
                ChaosReportFixture.buckets(), HistoryCheck.check(ChaosReportFixture.goodHistory(20), java.time.Duration.ofSeconds(10)),
                "Checked", null));
        JsonObject o = JsonParser.parseString(r.json()).getAsJsonObject();
        assertEquals("two data nodes (n1, n2) and a witness (n3)", o.get("topology").getAsString());
        assertTrue(o.get("witness").getAsBoolean());
        assertTrue(r.summary().lines().findFirst().orElseThrow().contains("two data nodes (n1, n2) and a witness (n3)"), r.summary());
        assertTrue(r.markdown().contains("two data nodes (n1, n2) and a witness (n3)"), r.markdown());
        assertTrue(r.title().contains("witness"), r.title());
        String plain = ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(20), 20L, 20, null).json();
        assertEquals("three data nodes", JsonParser.parseString(plain).getAsJsonObject().get("topology").getAsString());
    }

    @Test
    void witnessRunsRefuseTheModesAWitnessHasNothingFor() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"chaos", "--witness", "--mode", "corrupt-follower", "--out", dir.toString()},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, code);
        String line = err.toString(StandardCharsets.UTF_8).strip();
        assertEquals(1, line.lines().count(), line);
        assertTrue(line.contains("--witness runs with --mode kill-leader, kill-follower or none"), line);
    }
}
