package io.wheelraft.rpc;

import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes of this process that the admin service may operate on, by group id and peer id.
 * The embedding process registers each node it starts and unregisters it on shutdown.
 * Thread-safe.
 */
public final class NodeRegistry {

    private final ConcurrentHashMap<String, ConcurrentHashMap<PeerId, Node>> groups = new ConcurrentHashMap<>();

    /** @throws IllegalStateException if another node is registered for the same group and peer */
    public void register(Node node) {
        Objects.requireNonNull(node, "node");
        String group = node.groupId();
        if (group == null || group.isEmpty()) {
            throw new IllegalArgumentException("node " + node.nodeId() + " has an empty group id");
        }
        Node previous = groups.computeIfAbsent(group, g -> new ConcurrentHashMap<>()).putIfAbsent(node.nodeId(), node);
        if (previous != null && previous != node) {
            throw new IllegalStateException("a node is already registered for group '" + group + "' peer " + node.nodeId());
        }
    }

    public void unregister(Node node) {
        Map<PeerId, Node> peers = groups.get(node.groupId());
        if (peers != null && peers.remove(node.nodeId(), node)) {
            // a group removed at run time leaves no empty entry behind
            groups.computeIfPresent(node.groupId(), (g, p) -> p.isEmpty() ? null : p);
        }
    }

    /** Every registered node, in no particular order (a copy: later registrations do not change it). */
    public java.util.List<Node> all() {
        java.util.List<Node> all = new java.util.ArrayList<>();
        for (Map<PeerId, Node> peers : groups.values()) {
            all.addAll(peers.values());
        }
        return all;
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
