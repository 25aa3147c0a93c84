package io.wheelraft.timer;

import static io.wheelraft.timer.HashedWheelTimerProbe.runWorkerPass;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class TimerStatsTest {

    @Test
    void countsPendingAndFiredTimeoutsOnAManualClock() {
        ManualClock clock = new ManualClock();
        HashedWheelTimer timer = HashedWheelTimer.builder().drivenBy(clock).build();
        timer.newTimeout(t -> { }, 5, TimeUnit.MILLISECONDS);
        timer.newTimeout(t -> { }, 10, TimeUnit.MILLISECONDS);
        Timeout cancelled = timer.newTimeout(t -> { }, 10, TimeUnit.MILLISECONDS);
        timer.newTimeout(t -> { }, 50, TimeUnit.MILLISECONDS);
        TimerStats stats = timer.stats();
        assertEquals(4, stats.pendingTimeouts());
        cancelled.cancel();
        clock.advanceMillis(20);
        assertEquals(2, stats.firedTimeouts(), "the cancelled one does not count");
        assertEquals(1, stats.pendingTimeouts());
        clock.advanceMillis(40);
        assertEquals(3, stats.firedTimeouts());
        assertEquals(0, stats.pendingTimeouts());
    }

    @Test
    void measuresHowLateAStalledWorkerFiresAndTheMaximumPerWindow() {
        AtomicLong now = new AtomicLong();
        HashedWheelTimer timer = HashedWheelTimer.builder().clock(now::get).tickDuration(1, TimeUnit.MILLISECONDS).threadFactory(HashedWheelTimerProbe.noWorker()).build();
        timer.newTimeout(t -> { }, 10, TimeUnit.MILLISECONDS);
        timer.newTimeout(t -> { }, 20, TimeUnit.MILLISECONDS);
        runWorkerPass(timer); // links them
        // The worker stalls (a GC pause) and passes again only at 45 ms: 35 and 25 ms late.
        now.set(TimeUnit.MILLISECONDS.toNanos(45));
        runWorkerPass(timer);
        TimerStats stats = timer.stats();
        assertEquals(2, stats.firedTimeouts());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(35 + 25), stats.totalLatenessNanos());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(35), stats.takeMaxLatenessNanos());
        assertEquals(0, stats.takeMaxLatenessNanos(), "a new window starts empty");
    }
}
