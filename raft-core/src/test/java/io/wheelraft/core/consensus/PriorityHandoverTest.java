package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.logging.RateLimitedLog;
import org.junit.jupiter.api.Test;
import org.slf4j.helpers.MessageFormatter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The leader's choice of a voter to hand leadership to, over a fake view of its followers. */
class PriorityHandoverTest {

    private static final long T = 100;
    private static final PeerId N1 = PeerId.parse("n1:1");
    private static final PeerId N2 = PeerId.parse("n2:2");
    private static final PeerId N3 = PeerId.parse("n3:3");

    /** N1 leads; priorities, matches and health as the test sets them. */
    private static final class Followers implements PriorityHandover.Followers {
        Membership membership = Membership.of(Configuration.parse("n1:1,n2:2,n3:3"));
        final Map<PeerId, Integer> priority = new HashMap<>(Map.of(N1, 1, N2, 1, N3, 1));
        final Map<PeerId, Long> match = new HashMap<>(Map.of(N2, 10L, N3, 10L));
        final Set<PeerId> unhealthy = new HashSet<>();

        @Override
        public Membership membership() {
            return membership;
        }

        @Override
        public int ownPriority() {
            return priority.get(N1);
        }

        @Override
        public int priority(PeerId peer) {
            return priority.get(peer);
        }

        @Override
        public long match(PeerId peer) {
            return match.getOrDefault(peer, 0L);
        }

        @Override
        public boolean healthy(PeerId peer, long nowMs) {
            return !unhealthy.contains(peer);
        }
    }

    @Test
    void equalPrioritiesNeverHandOver() {
        PriorityHandover h = new PriorityHandover("g", N1, T);
        Followers f = new Followers();
        for (long now = 0; now < 100 * T; now += T / 10) {
            assertNull(h.target(f, 10, true, now));
        }
        assertEquals(0, h.attempts());
    }

    @Test
    void theMostPreferredCaughtUpHealthyVoterIsChosen() {
        PriorityHandover h = new PriorityHandover("g", N1, T);
        Followers f = new Followers();
        f.priority.put(N2, 3);
        f.priority.put(N3, 5);
        f.match.put(N3, 9L);
        assertEquals(N2, h.target(f, 10, true, 0), "n3 lacks committed entries: n2, also higher than the leader, goes");

        PriorityHandover h2 = new PriorityHandover("g", N1, T);
        f.match.put(N3, 10L);
        f.unhealthy.add(N3);
        assertEquals(N2, h2.target(f, 10, true, 0), "n3 does not answer");

        PriorityHandover h3 = new PriorityHandover("g", N1, T);
        f.unhealthy.clear();
        assertEquals(N3, h3.target(f, 10, true, 0));
    }

    @Test
    void aLeaderOfPriorityZeroHandsOverToAnyoneEligible() {
        PriorityHandover h = new PriorityHandover("g", N1, T);
        Followers f = new Followers();
        f.priority.put(N1, 0);
        f.priority.put(N3, 0);
        assertEquals(N2, h.target(f, 10, true, 0));
    }

    @Test
    void nothingHappensWhileUnsettledOrJoint() {
        PriorityHandover h = new PriorityHandover("g", N1, T);
        Followers f = new Followers();
        f.priority.put(N2, 5);
        assertNull(h.target(f, 10, false, 0), "a transfer or membership change is under way, or nothing of this term is committed");
        f.membership = new Membership(Configuration.parse("n1:1,n2:2,n3:3"), Configuration.parse("n1:1,n2:2"), 4);
        assertNull(h.target(f, 10, true, 0), "joint configuration");
        assertEquals(0, h.attempts());
    }

    @Test
    void afterAnAttemptTheNextWaitsTwiceAsLongEachTimeUpTo32Timeouts() {
        PriorityHandover h = new PriorityHandover("g", N1, T);
        Followers f = new Followers();
        f.priority.put(N2, 5);
        long now = 0;
        assertEquals(N2, h.target(f, 10, true, now));
        long[] waits = {2 * T, 4 * T, 8 * T, 16 * T, 32 * T, 32 * T};
        for (long wait : waits) {
            assertNull(h.target(f, 10, true, now + wait - 1), "too early after " + h.attempts() + " attempt(s)");
            now += wait;
            assertEquals(N2, h.target(f, 10, true, now));
        }
        assertEquals(7, h.attempts());
    }

    /**
     * When a process comes back, every group preferring it hands leadership back at about the same
     * time: one line for all of them, the next one saying how many were held back.
     */
    @Test
    void handoversOfManyGroupsAtOnceWriteOneLine() {
        List<String> lines = new ArrayList<>();
        RateLimitedLog log = new RateLimitedLog((warn, format, args) -> lines.add(MessageFormatter.arrayFormat(format, args).getMessage()), 10 * T);
        Followers f = new Followers();
        f.priority.put(N2, 2);
        for (int g = 0; g < 100; g++) {
            assertEquals(N2, new PriorityHandover("g" + g, N1, T, log).target(f, 10, true, 5 * T));
        }
        assertEquals(List.of("g0/n1:1 hands leadership to n2:2: election priority 2 is higher than its own 1 (attempt 1)"), lines);

        assertEquals(N2, new PriorityHandover("g100", N1, T, log).target(f, 10, true, 15 * T));
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).startsWith("g100/n1:1 hands leadership to n2:2") && lines.get(1).endsWith("(99 similar lines suppressed since the previous one)"),
                lines.get(1));
    }
}
