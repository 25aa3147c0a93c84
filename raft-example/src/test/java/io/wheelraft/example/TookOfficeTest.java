package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How the chaos runner turns a new leader's status into fault → new leader ({@link ChaosRunner#tookOfficeMs}). */
class TookOfficeTest {

    private static final long FAULT = ChaosRunner.epochMicros(Instant.parse("2026-11-27T20:00:00.000000Z"));

    private static LocalCluster.NodeView leaderSince(long micros) {
        return new LocalCluster.NodeView("127.0.0.1:1", "leader", 3, "127.0.0.1:1", 10, 10, 10, micros);
    }

    @Test
    void theLeadersOwnRecordOfItsWinIsTheFigureNotWhenThePollSawIt() {
        assertEquals(87.5, ChaosRunner.tookOfficeMs(FAULT, leaderSince(FAULT + 87_500), 112.0), 1e-9);
    }

    @Test
    void aServerThatDoesNotSayFallsBackToThePoll() {
        assertEquals(112.0, ChaosRunner.tookOfficeMs(FAULT, leaderSince(0), 112.0), 1e-9);
    }

    @Test
    void aRecordOutsideFaultToSeenIsClampedIntoIt() {
        assertEquals(112.0, ChaosRunner.tookOfficeMs(FAULT, leaderSince(FAULT + 500_000), 112.0), 1e-9, "not after the poll saw it");
        assertEquals(0.0, ChaosRunner.tookOfficeMs(FAULT, leaderSince(FAULT - 5_000), 112.0), 1e-9, "not before the fault");
    }

    @Test
    void epochMicrosKeepsMicroseconds() {
        assertEquals(1_764_273_600_123_456L, ChaosRunner.epochMicros(Instant.parse("2025-11-27T20:00:00.123456789Z")));
    }
}
