package io.wheelraft.rpc;

import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.NoSuchElementException;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeRegistryTest {

    /** A node that only knows its group and id: all the registry asks of it. */
    private static Node node(String group, String peer) {
        PeerId id = PeerId.parse(peer);
        return (Node) Proxy.newProxyInstance(Node.class.getClassLoader(), new Class<?>[] {Node.class}, (proxy, method, args) ->
                switch (method.getName()) {
                    case "groupId" -> group;
                    case "nodeId" -> id;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> group + "/" + peer;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void findsEachNodeByGroupAndPeerAndTheOnlyOneWithoutAPeer() {
        NodeRegistry r = new NodeRegistry();
        Node a1 = node("a", "h1:1");
        Node a2 = node("a", "h2:2");
        Node b1 = node("b", "h1:1");
        r.register(a1);
        r.register(a2);
        r.register(b1);
        r.register(a1); // registering the same node again changes nothing
        assertSame(a1, r.find("a", "h1:1"));
        assertSame(a2, r.find("a", "h2:2"));
        assertSame(b1, r.find("b", ""));
        IllegalArgumentException several = assertThrows(IllegalArgumentException.class, () -> r.find("a", ""));
        assertTrue(several.getMessage().contains("has 2 nodes here"), several.getMessage());
        assertEquals(3, visited(r).size(), "each node visited once");
        assertEquals(Set.of(a1, a2, b1), Set.copyOf(visited(r)));
    }

    @Test
    void anotherNodeForTheSameGroupAndPeerIsRefusedAndTheFirstStays() {
        NodeRegistry r = new NodeRegistry();
        Node first = node("a", "h1:1");
        r.register(first);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> r.register(node("a", "h1:1")));
        assertTrue(e.getMessage().contains("already registered for group 'a' peer h1:1"), e.getMessage());
        assertSame(first, r.find("a", "h1:1"));
    }

    @Test
    void unregisteringLeavesTheOthersAndTheLastTakesItsGroupAlong() {
        NodeRegistry r = new NodeRegistry();
        Node a1 = node("a", "h1:1");
        Node a2 = node("a", "h2:2");
        r.register(a1);
        r.register(a2);
        r.unregister(node("a", "h1:1")); // a different node with the same ids is not the one registered
        assertSame(a1, r.find("a", "h1:1"));
        r.unregister(a1);
        assertSame(a2, r.find("a", ""), "the other node of the group stays, and is now the only one");
        r.unregister(a2);
        NoSuchElementException gone = assertThrows(NoSuchElementException.class, () -> r.find("a", ""));
        assertTrue(gone.getMessage().contains("no node of group 'a' here"), gone.getMessage());
        assertTrue(visited(r).isEmpty());
    }

    private static java.util.List<Node> visited(NodeRegistry r) {
        java.util.List<Node> seen = new java.util.ArrayList<>();
        r.forEachNode(seen::add);
        return seen;
    }
}
