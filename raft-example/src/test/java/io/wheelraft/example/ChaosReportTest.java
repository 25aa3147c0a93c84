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
    void electionsBeyondOnePerLeaderFaultAreCountedAsNotExplained() {
        ChaosReport r = isolateReport(List.of(isolateRound(1, 0), isolateRound(2, 0)), 5);
        assertEquals(3, JsonParser.parseString(r.json()).getAsJsonObject().get("extraElections").getAsInt());
        assertTrue(r.summary().contains("not explained by a fault: 3"), r.summary());
        assertEquals(0, JsonParser.parseString(ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(20), 20L, 20, null).json())
                .getAsJsonObject().get("extraElections").getAsInt(), "three kills, three elections");
    }

    @Test
    void anIsolatedLeadersAnswerAfterItsLeaseFailsTheRun() {
        ChaosReport clean = isolateReport(List.of(isolateRound(1, 0), isolateRound(2, 0)), 2);
        assertTrue(clean.invariantsHold(), clean.summary());
        JsonObject o = JsonParser.parseString(clean.json()).getAsJsonObject();
        assertEquals(40.0, o.getAsJsonObject("leaderToFirstAckMs").get("median").getAsDouble(), 1e-9);
        assertEquals(950.0, o.getAsJsonObject("ownStepDownMs").get("median").getAsDouble(), 1e-9);
        assertTrue(clean.markdown().contains("heal → old leader caught up"), clean.markdown());

        ChaosReport stale = isolateReport(List.of(isolateRound(1, 0), isolateRound(2, 2)), 2);
        assertFalse(stale.invariantsHold());
        assertEquals(2, JsonParser.parseString(stale.json()).getAsJsonObject().get("victimAcksAfterLease").getAsLong());
        assertFalse(stale.targets().get("isolated leader acknowledges nothing invoked after its lease expired"));
    }

    private static ChaosRunner.Round isolateRound(int n, long acksAfterLease) {
        return new ChaosRunner.Round(n, "n1", "n2", n + 1, 1200, 1240, 1500, Double.NaN, 300, acksAfterLease, "", "n1 cut off", 950);
    }

    private ChaosReport isolateReport(List<ChaosRunner.Round> rounds, int elections) {
        ChaosRunner.Settings s = new ChaosRunner.Settings(rounds.size(), 1000, ChaosRunner.Mode.ISOLATE_LEADER, dir, 16, 60, 3600);
        return new ChaosReport(s, new ChaosReport.Measured(rounds, 20, 0, 0, 20L, "", List.of(), elections, elections, elections + 1, 20,
                java.util.Map.of("10.77.1.1:7001", "n1"), ChaosReportFixture.events(), ChaosReportFixture.buckets(),
                HistoryCheck.check(ChaosReportFixture.goodHistory(20), java.time.Duration.ofSeconds(10)), "Checked", null));
    }

    @Test
    void histogramCountsEveryValueInItsBin() {
        int[] c = ChaosCharts.counts(List.of(0.0, 49.9, 50.0, 120.0, 5000.0), 50, 4);
        assertEquals(List.of(2, 1, 1, 1), java.util.Arrays.stream(c).boxed().toList(), "values past the last bin count in it");
    }
}
