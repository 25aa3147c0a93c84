package io.wheelraft.core.spi;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Carries Raft messages between peers. One transport per process serves every group hosted in
 * it: incoming requests are routed by {@code (group_id, peer_id)} to the handler registered for
 * them. Implementations: in memory (raft-core simulation, with fault injection) and gRPC
 * (raft-rpc, the default).
 *
 * <p>Contract:
 * <ul>
 *   <li>Every outgoing call returns at once; its future completes with the response, or
 *       exceptionally with a {@link TransportException} (unreachable, timed out, rejected,
 *       unknown group) within {@code timeoutMs}. A dead peer never blocks the caller. When the
 *       target's handler refuses a request, the caller gets the handler's own
 *       {@link TransportException} kind (a stopped node's NOT_FOUND), or REJECTED carrying the
 *       handler's reason for anything else (a malformed request).</li>
 *   <li>Requests from one sender to one target should reach the handler in the order they were
 *       sent (pipelined replication is fast only then); the node stays safe if they do not.</li>
 *   <li>When the connection to a remote endpoint breaks (the process died, its socket reset),
 *       every {@link ConnectionListener} is told within milliseconds; a benign reconnect that
 *       loses nothing is not reported.</li>
 * </ul>
 *
 * <p>raft-testkit's {@code RaftTransportContract} checks all of this: an implementation passes it.
 */
public interface RaftTransport extends AutoCloseable {

    /** Routes requests addressed to {@code (groupId, self)} to {@code handler}. */
    void register(String groupId, PeerId self, RaftRequestHandler handler);

    /** Stops routing to that node; later requests to it fail with NOT_FOUND. */
    void unregister(String groupId, PeerId self);

    CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs);

    CompletableFuture<AppendEntriesResponse> appendEntries(PeerId target, AppendEntriesRequest request, long timeoutMs);

    CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId target, InstallSnapshotRequest request, long timeoutMs);

    CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId target, TimeoutNowRequest request, long timeoutMs);

    CompletableFuture<ReadIndexResponse> readIndex(PeerId target, ReadIndexRequest request, long timeoutMs);

    /**
     * This node will talk to {@code peer}: open the connection now, so that the first message
     * does not pay for opening it. That first message is often a vote in a failover, sent by a
     * node that restarted since it last campaigned and so never dialled its peers (in the chaos
     * runs opening a channel and its first call took 100-250 ms, a lost election round). Returns
     * at once; the work happens in the background. Nothing to do for transports without
     * connections.
     */
    default void prepareConnection(PeerId peer) {
    }

    /**
     * The event loop the calling thread runs, when it is a network I/O thread of this transport's
     * library (reading a client's or a peer's messages); null otherwise, and for transports without
     * event loops. A task given to it runs later on this same thread, after the loop has delivered
     * what it is reading, without waking any other thread. The node uses it to gather one read's
     * burst of client requests into one proposal. Tasks given to it must not block.
     */
    default Executor callingEventLoop() {
        return null;
    }

    /** Adds a listener for broken connections to remote endpoints. */
    void addConnectionListener(ConnectionListener listener);

    void removeConnectionListener(ConnectionListener listener);

    @Override
    void close();
}
