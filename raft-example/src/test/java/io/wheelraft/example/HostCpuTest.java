package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostCpuTest {

    @Test
    void theAggregateLineCountsEightFieldsAndTheEighthIsSteal() {
        // guest and guest_nice (the last two) are already inside user and nice
        HostCpu.Snapshot s = HostCpu.parse("cpu  100 10 50 800 20 0 5 15 7 3");
        assertEquals(1000, s.total());
        assertEquals(15, s.steal());
    }

    @Test
    void stealIsItsShareOfAllTheCpuTimeBetweenTwoSnapshots() {
        HostCpu.Snapshot before = new HostCpu.Snapshot(1_000, 10);
        HostCpu.Snapshot after = new HostCpu.Snapshot(1_400, 110);
        assertEquals(25.0, HostCpu.stealPercent(before, after), 1e-9);
    }

    @Test
    void withoutTwoSnapshotsOrTimeBetweenThemStealIsUnknown() {
        HostCpu.Snapshot s = new HostCpu.Snapshot(1_000, 10);
        assertTrue(Double.isNaN(HostCpu.stealPercent(null, s)));
        assertTrue(Double.isNaN(HostCpu.stealPercent(s, null)));
        assertTrue(Double.isNaN(HostCpu.stealPercent(s, s)));
    }

    @Test
    void aLineThatIsNotTheAggregateOneIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HostCpu.parse("cpu0 1 2 3 4 5 6 7 8"));
        assertTrue(e.getMessage().contains("cpu0 1 2"), e.getMessage());
    }
}
