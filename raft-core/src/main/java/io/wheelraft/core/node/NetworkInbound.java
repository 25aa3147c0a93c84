package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What the network brings one {@link NodeImpl}: its peers' requests (RequestVote, AppendEntries,
 * TimeoutNow, ReadIndex), the answers to its own requests (through the {@link Outbox}), and the
 * transport's connection events. Each becomes one step of the core on the node's Raft lane,
 * whose batch the node then carries out. It exists apart from the node, which starts, stops and
 * serves its own callers, because turning network traffic into core steps is a job of its own;
 * thread-safe as the node's public methods are: everything runs on the lane.
 */
final class NetworkInbound {

    private static final Logger LOG = LoggerFactory.getLogger(NodeImpl.class);
    /** One line per interval for all groups of the process: a process hosting thousands loses thousands of leaders at once. */
    private static final RateLimitedLog BROKE_LOG = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final NodeImpl node;
    private final String groupId;
    private final PeerId self;
    private final io.wheelraft.core.NodeOptions options;
    private final SerialLane lane;
    private final Random random;
    private final NodeMirror mirror;

    NetworkInbound(NodeImpl node, io.wheelraft.core.NodeOptions options, SerialLane lane, Random random, NodeMirror mirror) {
        this.node = node;
        this.groupId = node.groupId();
        this.self = node.nodeId();
        this.options = options;
        this.lane = lane;
        this.random = random;
        this.mirror = mirror;
    }

    private <T> CompletableFuture<T> onLaneAnswer(Supplier<T> handler) {
        CompletableFuture<T> f = new CompletableFuture<>();
        lane.execute(() -> {
            if (node.halted()) {
                f.completeExceptionally(node.notRunning());
                return;
            }
            try {
                T answer = handler.get(); // the step first: the batch (and its durable point) is taken after it
                node.carrier().carryOutAnswering(node.core().ready(), answer, f);
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
                node.onLaneFailure(e);
            }
        });
        return f;
    }

    CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest request) {
        CompletableFuture<RequestVoteResponse> f = new CompletableFuture<>();
        if (LOG.isDebugEnabled()) {
            LOG.debug("{}/{}: {} request of term {} from {} arrived", groupId, self, request.getPreVote() ? "pre-vote" : "vote",
                    request.getTerm(), request.getServerId());
        }
        lane.execute(() -> {
            if (node.halted()) {
                f.completeExceptionally(new TransportException(TransportException.Kind.NOT_FOUND, groupId + "/" + self + " is not running"));
                return;
            }
            try {
                // A pre-vote answer may be held (null): it leaves later as a Ready.VoteAnswered.
                RequestVoteResponse answer = node.core().handleRequestVote(request, node.now(), f::complete);
                if (answer == null) {
                    node.carryOut();
                } else {
                    node.carrier().carryOutAnswering(node.core().ready(), answer, f);
                }
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
                node.onLaneFailure(e);
            }
        });
        return f;
    }

    CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
        CompletableFuture<AppendEntriesResponse> f = new CompletableFuture<>();
        lane.executeHere(() -> {
            if (node.halted()) {
                f.completeExceptionally(node.notRunning());
                return;
            }
            try {
                RaftCore.AppendResult r = node.core().handleAppendEntries(request, node.now());
                mirror.lastLeaderContactMs = node.core().lastLeaderContactMs();
                node.carrier().carryOutAcknowledging(node.core().ready(), r, f);
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
                node.onLaneFailure(e);
            }
        });
        return f;
    }

    CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request) {
        return onLaneAnswer(() -> node.core().handleTimeoutNow(request, node.now()));
    }

    CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest request) {
        CompletableFuture<ReadIndexResponse> f = new CompletableFuture<>();
        // The follower's caller chose how leadership is confirmed (a quorum round or the lease).
        boolean lease = NodeReads.optionOf(request.getMode(), options.readOnlyOption()) == ReadOnlyOption.LEASE;
        node.onLaneOr(() -> node.step(() -> node.core().readIndex(List.of(node.reads().remote(f)), lease, node.now())), () -> f.completeExceptionally(node.notRunning()));
        return f;
    }

    void onConnectionLost(String endpoint) {
        node.onLane(() -> {
            boolean leaderLost = node.core().onConnectionLost(endpoint, node.now());
            node.carryOut(); // a quiet node woke, held answers were decided
            if (leaderLost) {
                // The core spaces the followers' turns a slot apart; a little jitter on top, should two
                // ever share a turn (a heartbeat with new turns was on its way when the leader failed).
                long delay = node.core().campaignDelayAfterBreakMs() + random.nextInt((int) Math.max(1, node.core().campaignJitterBoundMs()));
                BROKE_LOG.info(node.now(), "{}/{}: connection to leader {} broke; campaigning in {} ms unless it speaks", groupId, self, endpoint, delay);
                node.timer().newTimeout(t -> node.onLane(() -> node.step(() -> node.core().onConnectionLostGraceElapsed(node.now()))), delay, TimeUnit.MILLISECONDS);
            }
        });
    }

    void onPeerGone(String endpoint) {
        node.onLane(() -> node.step(() -> node.core().onPeerGone(endpoint, node.now())));
    }

    void onPeerSilent(String endpoint) {
        node.onLane(() -> node.step(() -> node.core().onPeerSilent(endpoint, node.now())));
    }

    void onConnectionRestored(String endpoint) {
        node.onLane(() -> node.step(() -> node.core().onConnectionRestored(endpoint, node.now())));
    }

    /** Answers from peers, brought back to the lane by the {@link Outbox}: each is one step of the node.core(). */
    /** Where the {@link Outbox} brings peers' answers to this node's requests. */
    Outbox.Answers peerAnswers() {
        return new PeerAnswers();
    }

    private final class PeerAnswers implements Outbox.Answers {
        @Override
        public void vote(PeerId to, RequestVoteRequest request, RequestVoteResponse response, boolean notHosted) {
            if (response != null) {
                node.core().handleRequestVoteResponse(to, request, response, node.now());
            } else if (notHosted) {
                node.core().handleRequestVoteNotHosted(to, request, node.now());
            } else {
                node.core().handleRequestVoteFailure(to, request, node.now());
            }
            node.carryOut();
        }

        @Override
        public void append(PeerId to, AppendEntriesRequest request, AppendEntriesResponse response) {
            if (response != null) {
                node.core().handleAppendEntriesResponse(to, request, response, node.now());
            } else {
                node.core().handleAppendEntriesFailure(to, request);
            }
            node.carryOut();
        }

        @Override
        public void snapshotSent(PeerId peer, long leaderTerm, long snapshotIndex, boolean ok, long higherTerm) {
            node.core().observeTerm(higherTerm, node.now());
            node.core().onSnapshotSent(peer, leaderTerm, snapshotIndex, ok, node.now());
            node.carryOut();
            mirror.matchIndexes = node.core().followerMatchIndexes();
        }
    }
}
