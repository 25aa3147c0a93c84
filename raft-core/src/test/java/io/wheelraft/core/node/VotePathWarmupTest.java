package io.wheelraft.core.node;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.TransportException;
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
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The vote path is run once per voter before the first failover: a pre-vote for term 0 to every
 * other voter and to the node itself, again only for those whose probe was not answered.
 */
class VotePathWarmupTest {

    private static final PeerId N1 = new PeerId("n1", 7001);
    private static final PeerId N2 = new PeerId("n2", 7002);
    private static final PeerId N3 = new PeerId("n3", 7003);

    /** Records vote requests; each answer is completed by the test. */
    private static final class RecordingTransport implements RaftTransport {
        final List<PeerId> targets = new ArrayList<>();
        final List<RequestVoteRequest> requests = new ArrayList<>();
        final List<CompletableFuture<RequestVoteResponse>> answers = new ArrayList<>();

        @Override
        public CompletableFuture<RequestVoteResponse> requestVote(PeerId target, RequestVoteRequest request, long timeoutMs) {
            targets.add(target);
            requests.add(request);
            CompletableFuture<RequestVoteResponse> f = new CompletableFuture<>();
            answers.add(f);
            return f;
        }

        @Override public void register(String groupId, PeerId self, RaftRequestHandler handler) { }
        @Override public void unregister(String groupId, PeerId self) { }
        @Override public CompletableFuture<AppendEntriesResponse> appendEntries(PeerId t, AppendEntriesRequest r, long ms) { throw new UnsupportedOperationException(); }
        @Override public CompletableFuture<InstallSnapshotResponse> installSnapshot(PeerId t, InstallSnapshotRequest r, long ms) { throw new UnsupportedOperationException(); }
        @Override public CompletableFuture<TimeoutNowResponse> timeoutNow(PeerId t, TimeoutNowRequest r, long ms) { throw new UnsupportedOperationException(); }
        @Override public CompletableFuture<ReadIndexResponse> readIndex(PeerId t, ReadIndexRequest r, long ms) { throw new UnsupportedOperationException(); }
        @Override public void addConnectionListener(ConnectionListener listener) { }
        @Override public void removeConnectionListener(ConnectionListener listener) { }
        @Override public void close() { }
    }

    private final RecordingTransport transport = new RecordingTransport();
    private final List<RequestVoteRequest> ownRequests = new ArrayList<>();
    private final VotePathWarmup warmup = new VotePathWarmup("g", N1, transport, 500, req -> {
        ownRequests.add(req);
        return CompletableFuture.completedFuture(RequestVoteResponse.newBuilder().setPreVote(true).build());
    });
    private final Membership three = Membership.of(new Configuration(List.of(N1, N2, N3)));

    @Test
    void everyOtherVoterAndTheNodeItselfGetOnePreVoteForTermZero() {
        warmup.warm(three);
        assertEquals(List.of(N2, N3), transport.targets);
        assertEquals(1, ownRequests.size(), "the node's own handler is run too");
        for (RequestVoteRequest r : transport.requests) {
            assertTrue(r.getPreVote(), "a probe must never be a real vote: " + r);
            assertEquals(0, r.getTerm(), "a probe asks for term 0, which no node grants or acts upon");
            assertEquals(N1.toString(), r.getServerId());
            assertEquals("g", r.getGroupId());
        }
        assertEquals(N2.toString(), transport.requests.get(0).getPeerId());
    }

    @Test
    void onlyVotersWhoseProbeWasNotAnsweredAreProbedAgain() {
        warmup.warm(three);
        transport.answers.get(0).complete(RequestVoteResponse.newBuilder().setPreVote(true).build()); // n2 answered
        warmup.warm(three);
        assertEquals(List.of(N2, N3), transport.targets, "n3's probe is still in flight: not sent twice");

        transport.answers.get(1).completeExceptionally(new TransportException(TransportException.Kind.UNREACHABLE, "n3 is down"));
        warmup.warm(three);
        assertEquals(List.of(N2, N3, N3), transport.targets, "n3 was down: tried again; n2 and the node itself are warm");
        assertEquals(1, ownRequests.size());
        assertTrue(warmup.warmed(N2));
        assertFalse(warmup.warmed(N3));
    }

    @Test
    void aNodeThatDoesNotVoteProbesNoOne() {
        PeerId learner = new PeerId("n4", 7004);
        VotePathWarmup ofLearner = new VotePathWarmup("g", learner, transport, 500, req -> {
            throw new AssertionError("a learner never votes");
        });
        ofLearner.warm(three);
        assertTrue(transport.targets.isEmpty());
    }

    @Test
    void aWitnessProbesNoOneBecauseItNeverAsksForVotes() {
        Membership withWitness = Membership.of(new Configuration(List.of(N1, N2, N3), List.of(), List.of(N1), java.util.Map.of()));
        warmup.warm(withWitness);
        assertTrue(transport.targets.isEmpty());
        assertTrue(ownRequests.isEmpty());
    }

    @Test
    void groupsSharingATransportProbeEachPeerProcessOnce() {
        warmup.warm(three);
        transport.answers.forEach(a -> a.complete(RequestVoteResponse.newBuilder().setPreVote(true).build()));
        List<RequestVoteRequest> otherOwn = new ArrayList<>();
        VotePathWarmup otherGroup = new VotePathWarmup("g2", N1, transport, 500, req -> {
            otherOwn.add(req);
            return CompletableFuture.completedFuture(RequestVoteResponse.newBuilder().setPreVote(true).build());
        });
        otherGroup.warm(three);
        assertEquals(List.of(N2, N3), transport.targets, "the second group's peers live in processes already warm");
        assertTrue(otherOwn.isEmpty(), "this process's own vote path is warm too");
        assertTrue(otherGroup.warmed(N3));

        VotePathWarmup onAnotherTransport = new VotePathWarmup("g", N1, new RecordingTransport(), 500, req -> new CompletableFuture<>());
        assertFalse(onAnotherTransport.warmed(N2), "another transport (another process) keeps its own record");
    }
}
