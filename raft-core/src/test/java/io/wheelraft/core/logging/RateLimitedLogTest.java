package io.wheelraft.core.logging;

import io.wheelraft.timer.ManualClock;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RateLimitedLogTest {

    private record Line(boolean warn, String format, List<Object> args) {
    }

    private final List<Line> lines = new ArrayList<>();
    private final ManualClock clock = new ManualClock();
    private final RateLimitedLog log = new RateLimitedLog((warn, format, args) -> lines.add(new Line(warn, format, Arrays.asList(args))), 1000);

    @Test
    void writesTheFirstLineAndHoldsBackRepeatsWithinTheInterval() {
        assertTrue(log.info(clock.millis(), "pre-vote for term {}", 1));
        for (int term = 2; term <= 20; term++) {
            clock.advanceMillis(50);
            assertFalse(log.info(clock.millis(), "pre-vote for term {}", term));
        }
        assertEquals(1, lines.size());
        assertEquals(19, log.suppressed());
    }

    @Test
    void theNextLineAfterTheIntervalSaysHowManyWereHeldBack() {
        log.info(clock.millis(), "pre-vote for term {}", 1);
        clock.advanceMillis(400);
        log.info(clock.millis(), "pre-vote for term {}", 2);
        clock.advanceMillis(400);
        log.info(clock.millis(), "pre-vote for term {}", 3);
        clock.advanceMillis(200); // exactly the interval after the first written line
        assertTrue(log.warn(clock.millis(), "pre-vote for term {}", 4));
        assertEquals(2, lines.size());
        Line second = lines.get(1);
        assertTrue(second.warn());
        assertEquals("pre-vote for term {} ({} similar lines suppressed since the previous one)", second.format());
        assertEquals(List.of(4, 2L), second.args());
        assertEquals(0, log.suppressed());
    }

    @Test
    void aLineAfterAQuietSpellIsWrittenWithoutACount() {
        log.info(clock.millis(), "lost");
        clock.advanceMillis(5000);
        log.info(clock.millis(), "lost");
        assertEquals(List.of(), lines.get(1).args());
        assertEquals("lost", lines.get(1).format());
    }

    @Test
    void aTrailingThrowableStaysTheLastArgument() {
        RuntimeException boom = new RuntimeException("boom");
        log.warn(clock.millis(), "send to {} failed", "n2", boom);
        log.warn(clock.millis(), "send to {} failed", "n2", boom);
        clock.advanceMillis(1000);
        log.warn(clock.millis(), "send to {} failed", "n3", boom);
        List<Object> args = lines.get(1).args();
        assertEquals("n3", args.get(0));
        assertEquals(1L, args.get(1));
        assertSame(boom, args.get(2));
    }

    @Test
    void refusesANonPositiveInterval() {
        assertThrows(IllegalArgumentException.class, () -> new RateLimitedLog((w, f, a) -> { }, 0));
    }
}
