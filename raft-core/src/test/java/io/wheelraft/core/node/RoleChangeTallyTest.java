package io.wheelraft.core.node;

import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoleChangeTallyTest {

    private final List<List<Object>> lines = new ArrayList<>();
    private final RoleChangeTally tally = new RoleChangeTally((warn, format, args) -> lines.add(Arrays.asList(args)), 10_000);

    @Test
    void theFirstChangeIsWrittenAtOnceAndLaterOnesAtMostOncePerIntervalWithTheirCounts() {
        tally.started(0);
        assertEquals(List.of(List.of(1L, 0L, 0L, 0L, 0L)), lines, "the first line at once");

        for (int i = 0; i < 500; i++) {
            tally.started(1_000 + i);
            tally.became(Role.CANDIDATE, 1_000 + i);
        }
        tally.became(Role.LEADER, 5_000);
        tally.became(Role.FOLLOWER, 9_999);
        assertEquals(1, lines.size(), "held back within the interval");

        tally.became(Role.LEADER, 10_000);
        assertEquals(List.of(500L, 2L, 1L, 500L, 10L), lines.get(1), "every change since the previous line, and over how long");

        tally.became(Role.FOLLOWER, 12_000);
        tally.became(Role.FOLLOWER, 20_000);
        assertEquals(List.of(0L, 0L, 2L, 0L, 10L), lines.get(2));
    }

    @Test
    void onlyFollowerCandidateAndLeaderAreTallied() {
        assertTrue(RoleChangeTally.tallied(Role.FOLLOWER));
        assertTrue(RoleChangeTally.tallied(Role.CANDIDATE));
        assertTrue(RoleChangeTally.tallied(Role.LEADER));
        for (Role rare : new Role[] {Role.ERROR, Role.REPAIRING, Role.SHUTDOWN, Role.LEARNER}) {
            assertFalse(RoleChangeTally.tallied(rare), rare + " is logged on its own");
        }
    }
}
