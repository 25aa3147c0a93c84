package io.wheelraft.example;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChaosReportTest {

    @TempDir
    Path dir;

    @Test
    void jsonCarriesTheElectionCountNodeNamesAndTheLinearizabilityVerdict() {
        ChaosReport r = ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(200), 200L, 200, null);
        JsonObject o = JsonParser.parseString(r.json()).getAsJsonObject();
        assertEquals(3, o.get("elections").getAsInt());
        assertEquals("127.0.0.1:40002", o.getAsJsonObject("nodes").get("n2").getAsString());
        assertEquals("n1", o.getAsJsonArray("rounds").get(0).getAsJsonObject().get("victim").getAsString());
        // Not measured in this mode: null, not NaN (which is not JSON).
        assertTrue(o.getAsJsonArray("rounds").get(0).getAsJsonObject().get("stepDownMs").isJsonNull());
        assertEquals("LINEARIZABLE", o.getAsJsonObject("linearizability").get("outcome").getAsString());
        assertEquals(201, o.getAsJsonObject("linearizability").get("operations").getAsInt());
        assertTrue(o.get("complete").getAsBoolean());
        assertTrue(o.get("invariantsHold").getAsBoolean());
    }

    @Test
    void aLostIncrementFailsTheRunAndNamesTheSmallestFailingWindow() {
        List<Operation<CounterModel.Input, Long>> ops = new ArrayList<>(ChaosReportFixture.goodHistory(200));
        // A read well after increment 120 was acknowledged sees only 100: acknowledged writes were lost.
        ops.add(Operation.completed(8, CounterModel.get(), 100L, 1_300_000_000L, 1_310_000_000L));
        ChaosReport r = ChaosReportFixture.report(dir, ops, 200L, 200, null);
        JsonObject lin = JsonParser.parseString(r.json()).getAsJsonObject().getAsJsonObject("linearizability");
        assertEquals("NOT_LINEARIZABLE", lin.get("outcome").getAsString());
        JsonObject w = lin.getAsJsonObject("smallestFailingWindow");
        assertEquals(1.31, w.get("toSeconds").getAsDouble(), 1e-9, "the window ends when the bad read returned");
        assertTrue(w.get("fromSeconds").getAsDouble() > 1.0, "the window starts after the last increment the read missed: " + w);
        assertTrue(w.get("operations").getAsInt() < 100, "the window is narrowed down: " + w);
        assertFalse(r.invariantsHold());
        assertTrue(r.summary().contains("NOT_LINEARIZABLE"), r.summary());
    }

    @Test
    void anIncompleteRunIsMarkedAndNeverPasses() throws Exception {
        ChaosReport r = ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(50), null, 50, "timed out: no leader");
        assertFalse(r.invariantsHold());
        r.write(dir);
        JsonObject o = JsonParser.parseString(Files.readString(dir.resolve("report.json"))).getAsJsonObject();
        assertFalse(o.get("complete").getAsBoolean());
        assertEquals("timed out: no leader", o.get("incompleteReason").getAsString());
        assertTrue(Files.readString(dir.resolve("report.html")).contains("INCOMPLETE"));
        assertTrue(Files.readString(dir.resolve("report.md")).contains("INCOMPLETE"));
        for (String png : List.of("timeline.png", "histogram.png")) {
            assertTrue(Files.size(dir.resolve(png)) > 10_000, png);
        }
    }

    @Test
    void histogramCountsEveryValueInItsBin() {
        int[] c = ChaosCharts.counts(List.of(0.0, 49.9, 50.0, 120.0, 5000.0), 50, 4);
        assertEquals(List.of(2, 1, 1, 1), java.util.Arrays.stream(c).boxed().toList(), "values past the last bin count in it");
    }
}
