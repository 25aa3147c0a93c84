package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Runs the vote path once before it is needed: after a start (and when the voters change) this
 * voter sends every other voter, and itself, one pre-vote request for term 0 and ignores the
 * answer. A failover is the first time a node sends or answers a vote request, and on a freshly
 * started JVM that first call paid for loading and linking the RPC's code: 40-80 ms from a
 * survivor's pre-vote to its arrival in the chaos runs on a busy two-core machine, against about
 * 10 ms once warm, most of a failover's budget.
 *
 * <p>The request changes nothing anywhere: no candidate ever asks for term 0 (a candidacy asks
 * for its term plus one, at least 1), and a pre-vote whose term is not above the voter's own is
 * refused without touching term, vote, timers or held answers (pre-votes bind no one anyway).
 * A peer whose probe fails (it is down) is tried again at the next call. Thread-safe: called on
 * the Raft lane; answers complete on transport threads.
 */
final class VotePathWarmup {

    private final String groupId;
    private final PeerId self;
    private final RaftTransport transport;
    private final long timeoutMs;
    /** This node's own vote handler (the same path a peer's request takes once it arrived). */
    private final Function<RequestVoteRequest, CompletableFuture<RequestVoteResponse>> ownHandler;
    /** Peers (and this node) whose probe was answered: the path is warm. */
    private final Set<PeerId> warmed = ConcurrentHashMap.newKeySet();
    private final Set<PeerId> inFlight = ConcurrentHashMap.newKeySet();

    VotePathWarmup(String groupId, PeerId self, RaftTransport transport, long timeoutMs,
                   Function<RequestVoteRequest, CompletableFuture<RequestVoteResponse>> ownHandler) {
        this.groupId = groupId;
        this.self = self;
        this.transport = transport;
        this.timeoutMs = timeoutMs;
        this.ownHandler = ownHandler;
    }

    /** The request sent to {@code to}: a pre-vote for term 0, which every node refuses. */
    RequestVoteRequest probe(PeerId to) {
        return RequestVoteRequest.newBuilder().setGroupId(groupId).setServerId(self.toString()).setPeerId(to.toString())
                .setTerm(0).setPreVote(true).build();
    }

    /** Probes every voter of {@code membership} (this node included, if it votes and is no witness) not warmed yet. */
    void warm(Membership membership) {
        if (!membership.isVoter(self) || membership.isWitness(self)) {
            return; // a witness never asks for votes; the voters' probes warm its answering side
        }
        for (PeerId p : membership.voters()) {
            if (warmed.contains(p) || !inFlight.add(p)) {
                continue;
            }
            CompletableFuture<RequestVoteResponse> answer;
            try {
                answer = p.equals(self) ? ownHandler.apply(probe(p)) : transport.requestVote(p, probe(p), timeoutMs);
            } catch (RuntimeException e) {
                inFlight.remove(p); // e.g. the transport is closing: nothing to warm
                continue;
            }
            answer.whenComplete((resp, err) -> {
                if (err == null) {
                    warmed.add(p);
                }
                inFlight.remove(p);
            });
        }
    }

    /** Whether {@code peer}'s probe was answered (for tests). */
    boolean warmed(PeerId peer) {
        return warmed.contains(peer);
    }
}
