package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;

/**
 * A node's name in log lines, {@code group/host:port}: in a process hosting many groups the peer
 * alone does not say which group a line is about. Formatted only when a line is written.
 */
record NodeLabel(String groupId, PeerId self) {
    @Override
    public String toString() {
        return groupId + "/" + self;
    }
}
