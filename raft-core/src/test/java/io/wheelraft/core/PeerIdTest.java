package io.wheelraft.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PeerIdTest {

    @Test
    void parsingTheSameTextAgainGivesTheSameInstance() {
        PeerId first = PeerId.parse("10.1.2.3:7000");
        assertSame(first, PeerId.parse("10.1.2.3:7000"), "every message names its peers: equal copies would pile up per group");
        assertEquals(new PeerId("10.1.2.3", 7000), first);
        assertEquals("10.1.2.3:7000:2", PeerId.parse("10.1.2.3:7000:2").toString());
    }

    @Test
    void badTextIsRefusedEveryTimeNamingIt() {
        for (int i = 0; i < 2; i++) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerId.parse("host:port"));
            assertTrue(e.getMessage().contains("'host:port'"), e.getMessage());
        }
    }

    @Test
    void hasEndpointMatchesExactlyWhatEndpointWrites() {
        PeerId p = new PeerId("10.1.2.3", 7000, 2);
        assertTrue(p.hasEndpoint(p.endpoint()));
        assertTrue(p.hasEndpoint("10.1.2.3:7000"));
        for (String other : new String[] {"10.1.2.3:700", "10.1.2.3:70000", "10.1.2.3:07000", "10.1.2.4:7000", "10.1.2.3:7001",
                "10.1.2.3-7000", "10.1.2.3:", "10.1.2.3", "x10.1.2.3:7000", "10.1.2.3:7000:2", "10.1.2.3:7o00"}) {
            assertFalse(p.hasEndpoint(other), other);
        }
        assertTrue(new PeerId("h", 1, 0).hasEndpoint("h:1"));
        assertTrue(new PeerId("h", 65535, 0).hasEndpoint("h:65535"));
    }
}
