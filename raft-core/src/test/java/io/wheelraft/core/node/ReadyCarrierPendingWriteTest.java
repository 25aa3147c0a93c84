package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.consensus.MembershipLog;
import io.wheelraft.core.consensus.RaftConfig;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.consensus.RaftLog;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A term and vote write that completes after the carrier handed it over (a store syncing many
 * groups' writes on its own thread): nothing that depends on it happens before it is durable,
 * later batches wait behind it in order, the lane is held meanwhile, and a failed write lets
 * nothing through.
 */
class ReadyCarrierPendingWriteTest {

    private static final PeerId N1 = new PeerId("n1", 7001);
    private static final PeerId N2 = new PeerId("n2", 7002);
    private static final PeerId N3 = new PeerId("n3", 7003);
    private static final long LATER = 10_000;

    /** Records every action in order; each term and vote write stays pending until the test completes it. */
    private static final class PendingSink extends RecordingSink {
        final List<CompletableFuture<Void>> pending = new ArrayList<>();

        @Override
        public CompletableFuture<Void> persistHardState(long term, PeerId votedFor) {
            actions.add("hardState " + term + " " + votedFor);
            CompletableFuture<Void> w = new CompletableFuture<>();
            pending.add(w);
            return w;
        }
    }

    /** The lane: remembers what it was asked to wait for, and runs the continuation when the test says. */
    private static final class RecordingHold implements ReadyCarrier.LaneHold {
        CompletableFuture<?> durable;
        Runnable then;

        @Override
        public void holdUntil(CompletableFuture<?> durable, Runnable then) {
            this.durable = durable;
            this.then = then;
        }

        /** What the lane does once the write completed: the continuation first. */
        void resume() {
            assertTrue(durable.isDone(), "the lane resumed before the write completed");
            Runnable r = then;
            durable = null;
            then = null;
            r.run();
        }
    }

    private final PendingSink sink = new PendingSink();
    private final RecordingHold hold = new RecordingHold();
    private final ReadyCarrier carrier = new ReadyCarrier(sink, hold);

    private static RaftCore core(PeerId self) {
        RaftConfig config = new RaftConfig("g", self, 1000, 200, 4, 64, 1 << 20, false, 0);
        return new RaftCore(config, new RaftLog(new MemoryLogStorage(), 0, 0), 0, null,
                new MembershipLog(Membership.of(new Configuration(List.of(N1, N2, N3)))), 0, 0);
    }

    private static RequestVoteRequest voteFor(PeerId candidate, long term) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term).build();
    }

    @Test
    void aGrantedVoteLeavesOnlyOnceItsWriteIsDurableAndTheLaneIsHeldMeanwhile() {
        RaftCore core = core(N2);
        RequestVoteResponse grant = core.handleRequestVote(voteFor(N1, 1), LATER);
        assertTrue(grant.getGranted());
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        carrier.carryOutAnswering(core.ready(), grant, answer);

        assertEquals(List.of("hardState 1 " + N1), sink.actions);
        assertFalse(answer.isDone(), "the grant left before the vote was durable");
        assertNotNull(hold.durable, "the lane was not held behind the write");
        assertTrue(carrier.waitingForDurable());
        assertTrue(core.ready().isEmpty(), "the batch must be free for the next step");

        sink.pending.get(0).complete(null);
        hold.resume();
        assertTrue(answer.isDone());
        assertTrue(answer.join().getGranted());
        assertFalse(carrier.waitingForDurable());
        assertNull(hold.durable, "nothing more to wait for");
    }

    @Test
    void aCandidatesVoteRequestsLeaveAtOnceAndItsRoleWaitsForTheWrite() {
        RaftCore core = core(N1);
        core.onElectionTimeout(LATER);
        List<Ready.Message> preVotes = List.copyOf(core.ready().messages());
        carrier.carryOut(core.ready()); // a pre-vote writes nothing
        for (Ready.Message m : preVotes) {
            Ready.VoteRequest v = (Ready.VoteRequest) m;
            core.handleRequestVoteResponse(v.to(), v.request(),
                    RequestVoteResponse.newBuilder().setTerm(0).setGranted(true).setPreVote(true).build(), LATER);
        }
        sink.actions.clear();
        carrier.carryOut(core.ready());
        assertEquals(List.of("send VoteRequest " + N2, "send VoteRequest " + N3, "hardState 1 " + N1), sink.actions);

        sink.pending.get(0).complete(null);
        hold.resume();
        assertEquals("event RoleChanged", sink.actions.get(3), sink.actions.toString());
        assertEquals(2, sink.actions.stream().filter(a -> a.startsWith("send VoteRequest")).count(),
                "a vote request left twice: " + sink.actions);
    }

    /**
     * While a write is on its way, a later batch (with a newer term's own write) and an answer given
     * outside a batch all wait, in the order they were decided; the newer write is handed over at
     * once, and nothing happens until both are durable.
     */
    @Test
    void laterBatchesAndAnswersWaitBehindTheWriteInOrder() {
        RaftCore core = core(N2);
        CompletableFuture<RequestVoteResponse> vote1 = new CompletableFuture<>();
        vote1.thenRun(() -> sink.actions.add("answer vote 1"));
        carrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFor(N1, 1), LATER), vote1);
        carrier.afterDurable(() -> sink.actions.add("outside a batch"));
        CompletableFuture<RequestVoteResponse> vote2 = new CompletableFuture<>();
        vote2.thenRun(() -> sink.actions.add("answer vote 2"));
        carrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFor(N3, 2), LATER + 1), vote2);

        assertEquals(List.of("hardState 1 " + N1, "hardState 2 " + N3), sink.actions, "the newer write waits for nothing");
        sink.pending.get(1).complete(null);
        assertFalse(hold.durable.isDone(), "the lane may resume only when every pending write is durable");
        sink.pending.get(0).complete(null);
        hold.resume();
        List<String> after = sink.actions.subList(2, sink.actions.size());
        assertEquals(List.of("answer vote 1", "outside a batch", "answer vote 2"),
                after.stream().filter(a -> a.startsWith("answer") || a.startsWith("outside")).toList(), sink.actions.toString());
        assertTrue(vote2.join().getGranted());
    }

    @Test
    void aFailedWriteLetsNothingThatWaitedHappen() {
        RaftCore core = core(N2);
        AppendEntriesRequest fromNewer = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(3)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(entry(1, 3)).build();
        CompletableFuture<AppendEntriesResponse> ack = new CompletableFuture<>();
        carrier.carryOutAcknowledging(core.ready(), core.handleAppendEntries(fromNewer, LATER), ack);
        CompletableFuture<String> outside = new CompletableFuture<>();
        carrier.afterDurable(() -> outside.complete("ran"));
        sink.actions.clear();

        sink.pending.get(0).completeExceptionally(new StorageException("meta write failed: disk full"));
        StorageException e = assertThrows(StorageException.class, hold::resume);
        assertTrue(e.getMessage().contains("disk full"), e.getMessage());
        assertTrue(sink.actions.isEmpty(), "something of a term not on disk happened: " + sink.actions);
        assertFalse(ack.isDone());
        assertFalse(outside.isDone());
    }

    @Test
    void aStoppedNodeDropsWhatWaitedForTheWrite() {
        RaftCore core = core(N2);
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        carrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFor(N1, 1), LATER), answer);
        carrier.failHeld(new io.wheelraft.core.spi.TransportException(io.wheelraft.core.spi.TransportException.Kind.CLOSED, "stopped"));
        sink.pending.get(0).complete(null);
        hold.resume();
        assertFalse(answer.isDone(), "a stopped node answered");
        assertFalse(carrier.waitingForDurable());
    }

    private static LogEntry entry(long index, long term) {
        return LogEntry.newBuilder().setTerm(term).setIndex(index).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFromUtf8("e" + index)).build();
    }
}
