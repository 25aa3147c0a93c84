package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftRequestHandler;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes this process hosts, by {@code (group id, peer id)}: where the server routes each
 * incoming Raft request. Thread-safe; lookups are lock-free.
 */
final class HandlerRegistry {

    private final ConcurrentHashMap<Key, RaftRequestHandler> handlers = new ConcurrentHashMap<>();

    void register(String groupId, PeerId self, RaftRequestHandler handler) {
        requireGroup(groupId);
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(handler, "handler");
        RaftRequestHandler previous = handlers.putIfAbsent(new Key(groupId, self.toString()), handler);
        if (previous != null && previous != handler) {
            throw new IllegalStateException("a node is already registered for group '" + groupId + "' peer " + self);
        }
    }

    void unregister(String groupId, PeerId self) {
        handlers.remove(new Key(groupId, String.valueOf(self)));
    }

    /** The handler for that group and peer id text (as sent on the wire), or null. */
    RaftRequestHandler find(String groupId, String peerId) {
        return handlers.get(new Key(groupId, peerId));
    }

    void clear() {
        handlers.clear();
    }

    private static void requireGroup(String groupId) {
        if (groupId == null || groupId.isEmpty()) {
            throw new IllegalArgumentException("group id must not be empty");
        }
    }

    private record Key(String groupId, String peerId) {
    }
}
