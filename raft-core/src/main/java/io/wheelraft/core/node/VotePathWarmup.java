package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;

import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
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
 * A peer whose probe fails (it is down) is tried again at the next call.
 *
 * <p>What gets warm is the process's code and its connection to a peer process, not anything of
 * one group, so the groups sharing a transport share the record of what is warm: a process
 * hosting many groups probes each peer process once, not once per group. Thread-safe: called on
 * the Raft lanes; answers complete on transport threads.
 */
final class VotePathWarmup {

    private final String groupId;
    private final PeerId self;
    private final RaftTransport transport;
    private final long timeoutMs;
    /** This node's own vote handler (the same path a peer's request takes once it arrived). */
    private final Function<RequestVoteRequest, CompletableFuture<RequestVoteResponse>> ownHandler;
    /** Per transport: the peer endpoints (and {@link #SELF}) whose probe was answered, and those being probed. */
    private static final Map<RaftTransport, Paths> SHARED = java.util.Collections.synchronizedMap(new WeakHashMap<>());
    private static final String SELF = "self";

    private record Paths(Set<String> warmed, Set<String> inFlight) {
        Paths() {
            this(ConcurrentHashMap.newKeySet(), ConcurrentHashMap.newKeySet());
        }
    }

    private final Set<String> warmed;
    private final Set<String> inFlight;

    VotePathWarmup(String groupId, PeerId self, RaftTransport transport, long timeoutMs,
                   Function<RequestVoteRequest, CompletableFuture<RequestVoteResponse>> ownHandler) {
        this.groupId = groupId;
        this.self = self;
        this.transport = transport;
        this.timeoutMs = timeoutMs;
        this.ownHandler = ownHandler;
        Paths paths = SHARED.computeIfAbsent(transport, t -> new Paths());
        this.warmed = paths.warmed();
        this.inFlight = paths.inFlight();
    }

    private String key(PeerId p) {
        return p.equals(self) ? SELF : p.endpoint();
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
            String key = key(p);
            if (warmed.contains(key) || !inFlight.add(key)) {
                continue;
            }
            CompletableFuture<RequestVoteResponse> answer;
            try {
                answer = p.equals(self) ? ownHandler.apply(probe(p)) : transport.requestVote(p, probe(p), timeoutMs);
            } catch (RuntimeException e) {
                inFlight.remove(key); // e.g. the transport is closing: nothing to warm
                continue;
            }
            answer.whenComplete((resp, err) -> {
                if (err == null) {
                    warmed.add(key);
                }
                inFlight.remove(key);
            });
        }
    }

    /** Whether {@code peer}'s probe was answered (for tests). */
    boolean warmed(PeerId peer) {
        return warmed.contains(key(peer));
    }
}
