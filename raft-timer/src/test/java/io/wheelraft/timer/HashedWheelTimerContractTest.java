package io.wheelraft.timer;

import java.util.concurrent.TimeUnit;

class HashedWheelTimerContractTest extends TimerContractTest {

    @Override
    Timer newTimer(ManualClock clock) {
        // 8 slots of 1 ms: most tests span several revolutions.
        return HashedWheelTimer.builder().drivenBy(clock).tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(8).build();
    }

    @Override
    Timer newRealTimer() {
        return HashedWheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).ticksPerWheel(8).build();
    }

    @Override
    long pending(Timer timer) {
        return ((HashedWheelTimer) timer).pendingTimeouts();
    }
}
