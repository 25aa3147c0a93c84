package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ThroughputTimelineTest {

    @Test
    void eachLineCountsOnlyItsOwnInterval() {
        AtomicLong acked = new AtomicLong(500); // acknowledged before the timeline began: not counted
        AtomicLong unknown = new AtomicLong(2);
        AtomicLong failed = new AtomicLong();
        List<String> lines = new ArrayList<>();
        long origin = 1_000_000_000L;
        ThroughputTimeline timeline = new ThroughputTimeline(acked::get, unknown::get, failed::get, origin, lines::add);

        acked.addAndGet(1_000);
        timeline.sample(origin + 250_000_000L);
        acked.addAndGet(0);
        unknown.addAndGet(3);
        failed.incrementAndGet();
        timeline.sample(origin + 500_000_000L);
        acked.addAndGet(300);
        timeline.sample(origin + 1_000_000_000L);

        assertEquals(List.of(
                "at 0.25 s: 4000 ops/s, 0 unknown, 0 failed",
                "at 0.50 s: 0 ops/s, 3 unknown, 1 failed",
                "at 1.00 s: 600 ops/s, 0 unknown, 0 failed"), lines);
    }

    @Test
    void aSampleAtTheSameInstantWritesNothing() {
        AtomicLong acked = new AtomicLong();
        List<String> lines = new ArrayList<>();
        ThroughputTimeline timeline = new ThroughputTimeline(acked::get, () -> 0, () -> 0, 0, lines::add);
        acked.set(10);
        timeline.sample(0);
        assertEquals(List.of(), lines);
        timeline.sample(100_000_000L);
        assertEquals(List.of("at 0.10 s: 100 ops/s, 0 unknown, 0 failed"), lines);
    }
}
