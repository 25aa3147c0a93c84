package io.wheelraft.core;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The preferred leader spreads groups evenly over the voters, and every member computes the same one. */
class PreferredLeaderTest {

    private static final List<PeerId> VOTERS = List.of(PeerId.parse("10.0.0.1:8081"), PeerId.parse("10.0.0.2:8081"),
            PeerId.parse("10.0.0.3:8081"));

    @Test
    void numberedGroupsSpreadEvenlyOverThreeVoters() {
        Map<PeerId, Integer> counts = new HashMap<>();
        for (int g = 0; g < 3_000; g++) {
            counts.merge(PreferredLeader.of(Integer.toString(g), VOTERS), 1, Integer::sum);
        }
        assertEquals(3, counts.size(), counts.toString());
        for (int n : counts.values()) {
            assertTrue(n > 900 && n < 1_100, "each voter should be preferred by about a third of 3,000 groups: " + counts);
        }
    }

    @Test
    void theChoiceDependsOnlyOnTheGroupAndTheSortedVoters() {
        for (int g = 0; g < 100; g++) {
            String id = "group-" + g;
            assertEquals(PreferredLeader.of(id, VOTERS), PreferredLeader.of(id, List.copyOf(VOTERS)));
            assertTrue(VOTERS.contains(PreferredLeader.of(id, VOTERS)));
        }
        assertThrows(IllegalArgumentException.class, () -> PreferredLeader.of("g", List.of()));
    }
}
