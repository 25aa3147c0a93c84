package io.wheelraft.core.node;

import io.wheelraft.proto.ConfigurationEntry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class WeakInternerTest {

    private static ConfigurationEntry entry(String... peers) {
        return ConfigurationEntry.newBuilder().addAllPeers(java.util.List.of(peers)).build();
    }

    @Test
    void equalValuesComeBackAsTheFirstInstanceAndOthersAsThemselves() {
        WeakInterner<ConfigurationEntry> interner = new WeakInterner<>();
        ConfigurationEntry first = entry("h1:1", "h2:2", "h3:3");
        ConfigurationEntry equal = entry("h1:1", "h2:2", "h3:3");
        ConfigurationEntry other = entry("h1:1", "h2:2", "h4:4");
        assertNotSame(first, equal);
        assertSame(first, interner.intern(first));
        assertSame(first, interner.intern(equal), "an equal value is replaced by the one already held");
        assertSame(other, interner.intern(other), "a different value is its own");
        assertEquals(equal, interner.intern(equal));
        assertNull(interner.intern(null));
    }
}
