package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProgressLineTest {

    @Test
    void fractionAndEtaCoverEveryPlannedStep() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressLine p = new ProgressLine(new PrintStream(bytes, true, StandardCharsets.UTF_8), false);
        p.plan(10, 20, 20, 5);
        assertTrue(p.fraction() < 0.05, "nothing done yet: " + p.fraction());
        assertTrue(p.etaSeconds() > 50 && p.etaSeconds() <= 55, "all four steps still ahead: " + p.etaSeconds());
        p.next("round 1", null);
        assertEquals(10.0 / 55, p.fraction(), 0.01);
        p.next("round 2", "round");
        // Round 1 took almost no time here, so round 2 is now expected to take as little; the final step keeps its 5 s.
        assertTrue(p.etaSeconds() >= 5 && p.etaSeconds() < 7, "eta " + p.etaSeconds());
        p.finish();
        assertEquals(1.0, p.fraction(), 1e-9);
        assertEquals(0.0, p.etaSeconds(), 1e-9);
        assertEquals("", bytes.toString(StandardCharsets.UTF_8), "--no-progress prints nothing");
    }

    @Test
    void skippedRoundsLeaveTheEta() {
        ProgressLine p = new ProgressLine(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), false);
        p.plan(10, 20, 20, 20, 5);
        p.next("round 1", null);
        p.skipNext(2);
        p.next("final checks", null);
        assertEquals(30.0 / 35, p.fraction(), 0.01, "start-up and round 1 done of start-up, round 1 and the final checks");
        assertTrue(p.etaSeconds() <= 5, "only the final checks are left: " + p.etaSeconds());
    }

    @Test
    void barShowsPercentElapsedAndEta() {
        String bar = ProgressLine.bar(0.5, 65, 3725, "round 2/4", "acked 100");
        assertTrue(bar.startsWith("[" + "#".repeat(15) + "-".repeat(15) + "]  50% 1:05 elapsed, ETA 1:02:05  round 2/4; acked 100"), bar);
    }
}
