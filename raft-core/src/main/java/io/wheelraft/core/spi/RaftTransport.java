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
     * A way to run a task later on the calling thread itself, when that thread is one of the
     * transport's own delivery threads that works through a task queue (for the gRPC transport:
     * a Netty event loop reading a peer's or a client's messages); null on any other thread, and
     * always null for transports without such threads (the default).
     *
     * <p>Contract of a non-null answer:
     * <ul>
     *   <li>It belongs to the thread that asked: call this on the thread in question and do not
     *       keep the answer for use from another thread's point of view.</li>
     *   <li>A task given to it runs on that same thread, never concurrently with the caller, in
     *       the order given, after the thread has finished what it is doing now (for an event
     *       loop: delivering the rest of the bytes it has read), and without waking any other
     *       thread.</li>
     *   <li>{@code execute} may throw {@link java.util.concurrent.RejectedExecutionException}
     *       while the transport shuts down; the caller then runs the task some other way.</li>
     *   <li>Tasks must not block: they hold up every connection served by that thread.</li>
     * </ul>
     * Cheap enough to call once per proposal. The node uses it to gather the burst of client
     * requests that one network read delivers into one proposal.
     */
    default Executor laterOnCallingThread() {
        return null;
    }

    /**
     * Whether this transport watches every remote endpoint it talks to with a per-process
     * heartbeat and reports one that goes silent (no reset, no answer) to its
     * {@link ConnectionListener}s ({@link ConnectionListener#onPeerSilent}) within
     * {@link #silentPeerDetectMs()}, and one that answers
     * again or restarted with {@link ConnectionListener#onConnectionRestored}. Groups go quiet
     * only on such a transport: without the reports a quiet follower would never notice a
     * black-holed leader. False by default.
     */
    default boolean reportsSilentPeers() {
        return false;
    }

    /**
     * When {@link #reportsSilentPeers()}: the longest time from an endpoint's last sign of life
     * to the report that it was lost (heartbeat interval plus the silence allowed). Undefined otherwise.
     */
    default long silentPeerDetectMs() {
        return Long.MAX_VALUE;
    }

    /** Adds a listener for broken connections to remote endpoints. */
    void addConnectionListener(ConnectionListener listener);

    void removeConnectionListener(ConnectionListener listener);

    @Override
    void close();
}
