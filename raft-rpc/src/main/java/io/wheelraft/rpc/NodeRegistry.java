package io.wheelraft.rpc;

import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes of this process that the admin service may operate on, by group id and peer id.
 * The embedding process registers each node it starts and unregisters it on shutdown.
 *
 * <p>Each group's nodes are an immutable map replaced on every change: a group almost always has
 * one node in a process, and a process hosting many groups would otherwise keep a concurrent map
 * (and its table) per group. Thread-safe: changes are atomic per group.
 */
public final class NodeRegistry {

    private final ConcurrentHashMap<String, Map<PeerId, Node>> groups = new ConcurrentHashMap<>();

    /** @throws IllegalStateException if another node is registered for the same group and peer */
    public void register(Node node) {
        Objects.requireNonNull(node, "node");
        String group = node.groupId();
        if (group == null || group.isEmpty()) {
            throw new IllegalArgumentException("node " + node.nodeId() + " has an empty group id");
        }
        groups.compute(group, (g, peers) -> {
            if (peers == null) {
                return Map.of(node.nodeId(), node);
            }
            Node previous = peers.get(node.nodeId());
            if (previous == node) {
                return peers;
            }
            if (previous != null) {
                throw new IllegalStateException("a node is already registered for group '" + group + "' peer " + node.nodeId());
            }
            Map<PeerId, Node> more = new HashMap<>(peers);
            more.put(node.nodeId(), node);
            return Map.copyOf(more);
        });
    }

    public void unregister(Node node) {
        // a group removed at run time leaves no empty entry behind
        groups.computeIfPresent(node.groupId(), (g, peers) -> {
            if (peers.get(node.nodeId()) != node) {
                return peers;
            }
            Map<PeerId, Node> fewer = new HashMap<>(peers);
            fewer.remove(node.nodeId());
            return fewer.isEmpty() ? null : Map.copyOf(fewer);
        });
    }

    /**
     * Visits every registered node, in no particular order, without copying them: the admin
     * service's summaries run it on every poll, and at 100,000 groups a copy per poll was a list
     * of 100,000 entries made and dropped many times a second. A node registered or unregistered
     * meanwhile may or may not be visited.
     */
    public void forEachNode(java.util.function.Consumer<Node> visitor) {
        Objects.requireNonNull(visitor, "visitor");
        for (Map<PeerId, Node> peers : groups.values()) {
            peers.values().forEach(visitor);
        }
    }

    /**
     * The node addressed by {@code groupId} and {@code peerId}; an empty {@code peerId} means the
     * only node of that group here.
     *
     * @throws java.util.NoSuchElementException naming the group or peer that is not here
     * @throws IllegalArgumentException if {@code peerId} does not parse, or is empty while the group has several nodes here
     */
    public Node find(String groupId, String peerId) {
        if (groupId == null || groupId.isEmpty()) {
            throw new IllegalArgumentException("group_id is empty");
        }
        Map<PeerId, Node> peers = groups.get(groupId);
        if (peers == null || peers.isEmpty()) {
            throw new java.util.NoSuchElementException("no node of group '" + groupId + "' here");
        }
        if (peerId == null || peerId.isEmpty()) {
            if (peers.size() > 1) {
                throw new IllegalArgumentException("group '" + groupId + "' has " + peers.size() + " nodes here; name one with peer_id");
            }
            return peers.values().iterator().next();
        }
        Node node = peers.get(PeerId.parse(peerId));
        if (node == null) {
            throw new java.util.NoSuchElementException("no node of group '" + groupId + "' with peer id " + peerId + " here");
        }
        return node;
    }
}
