package io.wheelraft.core;

import io.wheelraft.core.node.NodeImpl;
import io.wheelraft.core.spi.RaftTransport;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Starts and stops one node of one Raft group with a given transport and storage (in the
 * options). The transport and storage stay owned by the caller, so one transport and one RocksDB
 * store can serve many groups. Thread-safe.
 */
public final class RaftGroupService {

    private final String groupId;
    private final PeerId self;
    private final NodeOptions options;
    private final RaftTransport transport;
    private final RaftRuntime runtime;
    private NodeImpl node;

    /** A node on the process-wide shared runtime (timing wheel and pools). */
    public RaftGroupService(String groupId, PeerId self, NodeOptions options, RaftTransport transport) {
        this(groupId, self, options, transport, RaftRuntime.shared());
    }

    /** A node on {@code runtime}, which stays the caller's to close after the node has shut down. */
    public RaftGroupService(String groupId, PeerId self, NodeOptions options, RaftTransport transport, RaftRuntime runtime) {
        this.groupId = groupId;
        this.self = Objects.requireNonNull(self, "self peer id");
        this.options = Objects.requireNonNull(options, "options");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
    }

    /**
     * Validates the options, recovers the node from its storage and starts it.
     *
     * @throws IllegalArgumentException naming the first invalid option
     * @throws IllegalStateException    if already started
     */
    public synchronized Node start() {
        if (node != null) {
            throw new IllegalStateException("group " + groupId + " node " + self + " is already started");
        }
        node = new NodeImpl(groupId, self, options, transport, runtime.nodeRuntime()).start();
        return node;
    }

    /** The running node, or null before {@link #start()}. */
    public synchronized Node node() {
        return node;
    }

    /**
     * Shuts the node down and waits up to {@code timeoutMs} for it to finish.
     *
     * @return true if it finished in time
     */
    public boolean shutdown(long timeoutMs) throws InterruptedException {
        NodeImpl n;
        synchronized (this) {
            n = node;
        }
        if (n == null) {
            return true;
        }
        n.shutdown(null);
        return n.join(timeoutMs, TimeUnit.MILLISECONDS);
    }
}
