package io.wheelraft.rpc;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link IoLag} over hand-run loops: the lag is the age of the oldest probe not yet run. */
class IoLagTest {

    private final ArrayDeque<Runnable> loop0 = new ArrayDeque<>();
    private final ArrayDeque<Runnable> loop1 = new ArrayDeque<>();
    private final IoLag lag = new IoLag(List.of(loop0::add, loop1::add));

    @Test
    void noLagBeforeAnyProbeNorOnceEveryLoopRanItsProbe() {
        assertEquals(0, lag.lagNanos(1_000));
        lag.probe(1_000);
        loop0.poll().run();
        loop1.poll().run();
        assertEquals(0, lag.lagNanos(9_000));
    }

    @Test
    void theLagIsTheAgeOfTheOldestProbeStillWaitingOnAnyLoop() {
        lag.probe(1_000);
        assertEquals(500, lag.lagNanos(1_500));
        loop0.poll().run();
        assertEquals(700, lag.lagNanos(1_700), "loop 1 is still behind");
        loop1.poll().run();
        assertEquals(0, lag.lagNanos(1_800));
    }

    @Test
    void aLoopWithAProbeWaitingGetsNoSecondOneAndKeepsItsAge() {
        lag.probe(1_000);
        loop0.poll().run();
        lag.probe(2_000);
        assertEquals(1, loop0.size(), "loop 0 ran its probe and got a new one");
        assertEquals(1, loop1.size(), "loop 1 still has its first probe and got no second");
        assertEquals(1_500, lag.lagNanos(2_500), "measured from loop 1's first probe");
    }

    @Test
    void loopsHaveAnsweredSinceATimeOnlyOnceEachRanAProbePostedThen() {
        assertEquals(false, lag.answeredSince(0), "no probe ever ran");
        lag.probe(1_000);
        loop0.poll().run();
        assertEquals(false, lag.answeredSince(1_000), "loop 1 has not run its probe");
        loop1.poll().run();
        assertEquals(true, lag.answeredSince(1_000));
        assertEquals(false, lag.answeredSince(1_001), "the probes were posted before that time");
    }

    @Test
    void aLoopThatRefusesTasksIsNotCountedAsBehind() {
        Executor closed = task -> {
            throw new RejectedExecutionException("shutting down");
        };
        IoLag withClosed = new IoLag(List.of(closed));
        withClosed.probe(1_000);
        assertEquals(0, withClosed.lagNanos(5_000));
    }
}
