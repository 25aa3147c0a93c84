package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
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
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The order in which a core's {@link Ready} batch is carried out, against a real core and a sink
 * that records every action: term and vote durable before anything leaves, nothing leaves when
 * that write fails, and a follower's acknowledgement waits for the durable log.
 */
class ReadyCarrierTest {

    private static final PeerId N1 = new PeerId("n1", 7001);
    private static final PeerId N2 = new PeerId("n2", 7002);
    private static final PeerId N3 = new PeerId("n3", 7003);
    private static final long LATER = 10_000;

    /** Records every sink action as one line, in order; can be told to fail the meta write. */
    private static class RecordingSink implements ReadyCarrier.Sink {
        final List<String> actions = new ArrayList<>();
        final List<Ready.LogWrite> writes = new ArrayList<>();
        boolean failMeta;

        @Override
        public void persistHardState(long term, PeerId votedFor) {
            if (failMeta) {
                throw new StorageException("meta write failed: disk full");
            }
            actions.add("hardState " + term + " " + votedFor);
        }

        @Override
        public void persistRepairing(boolean repairing) {
            if (failMeta) {
                throw new StorageException("meta write failed: disk full");
            }
            actions.add("repairing " + repairing);
        }

        @Override
        public void handle(Ready.Event event) {
            actions.add("event " + event.getClass().getSimpleName());
        }

        @Override
        public void writeLog(Ready.LogWrite write) {
            writes.add(write);
            actions.add("log " + write.entries().get(write.entries().size() - 1).getIndex());
        }

        @Override
        public void send(Ready.Message message) {
            actions.add("send " + message.getClass().getSimpleName() + " " + message.to());
        }

        @Override
        public void scheduleElectionRetry() {
            actions.add("retry");
        }

        @Override
        public void awaitCampaignSlot() {
            actions.add("await slot");
        }

        @Override
        public void scheduleWake(long atMs) {
            actions.add("wake " + atMs);
        }

        long count(String prefix) {
            return actions.stream().filter(a -> a.startsWith(prefix)).count();
        }
    }

    private final MemoryLogStorage storage = new MemoryLogStorage();
    private final RecordingSink sink = new RecordingSink();
    private final ReadyCarrier carrier = new ReadyCarrier(sink);

    private RaftCore core(PeerId self) {
        RaftConfig config = new RaftConfig("g", self, 1000, 200, 4, 64, 1 << 20, false, 0);
        return new RaftCore(config, new RaftLog(storage, 0, 0), 0, null,
                new MembershipLog(Membership.of(new Configuration(List.of(N1, N2, N3)))), 0, 0);
    }

    /** Drives {@code core} (N1) through a won pre-vote: the next batch starts its candidacy. */
    private void winPreVote(RaftCore core) {
        core.onElectionTimeout(LATER);
        List<Ready.Message> preVotes = List.copyOf(core.ready().messages());
        carrier.carryOut(core.ready());
        assertEquals(2, sink.count("send VoteRequest"), "the pre-vote goes to both peers");
        sink.actions.clear();
        for (Ready.Message m : preVotes) {
            Ready.VoteRequest v = (Ready.VoteRequest) m;
            core.handleRequestVoteResponse(v.to(), v.request(),
                    RequestVoteResponse.newBuilder().setTerm(0).setGranted(true).setPreVote(true).build(), LATER);
        }
    }

    /**
     * A candidate's vote requests travel while its new term and self-vote are written (they
     * promise nothing); everything else of the candidacy, its role included, waits for the write.
     */
    @Test
    void aCandidatesVoteRequestsLeaveWhileItsTermIsWrittenAndNothingElseBefore() {
        RaftCore core = core(N1);
        winPreVote(core);
        carrier.carryOut(core.ready());
        assertEquals(List.of("send VoteRequest " + N2, "send VoteRequest " + N3, "hardState 1 " + N1, "event RoleChanged"),
                sink.actions.subList(0, 4), sink.actions.toString());
        assertEquals(2, sink.count("send VoteRequest"), "each vote request leaves once: " + sink.actions);
    }

    /** The same for a leader transfer's candidacy (TimeoutNow skips the pre-vote). */
    @Test
    void aTransferCandidacySendsItsVoteRequestsBeforeTheWriteToo() {
        RaftCore core = core(N2);
        AppendEntriesRequest hb = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).setHeartbeat(true).build();
        carrier.carryOutAcknowledging(core.ready(), core.handleAppendEntries(hb, LATER), new CompletableFuture<>());
        sink.actions.clear();
        core.handleTimeoutNow(io.wheelraft.proto.TimeoutNowRequest.newBuilder().setGroupId("g").setServerId(N1.toString())
                .setPeerId(N2.toString()).setTerm(1).build(), LATER + 1);
        carrier.carryOut(core.ready());
        assertEquals(List.of("send VoteRequest " + N1, "send VoteRequest " + N3, "hardState 2 " + N2),
                sink.actions.subList(0, 3), sink.actions.toString());
    }

    @Test
    void aFailedCandidacyWriteLetsNothingButTheVoteRequestsHappen() {
        RaftCore core = core(N1);
        winPreVote(core);
        sink.failMeta = true;
        assertThrows(StorageException.class, () -> carrier.carryOut(core.ready()));
        assertEquals(List.of("send VoteRequest " + N2, "send VoteRequest " + N3), sink.actions,
                "something of a term not on disk happened besides the vote requests: " + sink.actions);
        assertTrue(core.ready().isEmpty(), "the failed batch must not linger for the next step");
    }

    /** A term learned from another node (no vote of our own) sends nothing before it is durable. */
    @Test
    void aFailedTermWriteLetsNothingOfTheBatchHappen() {
        RaftCore core = core(N2);
        AppendEntriesRequest fromNewer = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(3)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(entry(1).toBuilder().setTerm(3)).build();
        RaftCore.AppendResult r = core.handleAppendEntries(fromNewer, LATER);
        sink.failMeta = true;
        CompletableFuture<AppendEntriesResponse> ack = new CompletableFuture<>();
        assertThrows(StorageException.class, () -> carrier.carryOutAcknowledging(core.ready(), r, ack));
        assertTrue(sink.actions.isEmpty(), "something of a term not on disk happened: " + sink.actions);
        assertFalse(ack.isDone());
    }

    @Test
    void aVoteIsNotAnsweredWhenItCannotBeWritten() {
        RaftCore core = core(N2);
        RequestVoteRequest req = RequestVoteRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1).build();
        RequestVoteResponse grant = core.handleRequestVote(req, LATER);
        assertTrue(grant.getGranted());
        sink.failMeta = true;
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        assertThrows(StorageException.class, () -> carrier.carryOutAnswering(core.ready(), grant, answer));
        assertFalse(answer.isDone(), "a grant left although the vote is not durable");
    }

    @Test
    void aVoteIsAnsweredOnlyAfterItIsWritten() {
        RaftCore core = core(N2);
        RequestVoteRequest req = RequestVoteRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1).build();
        RequestVoteResponse grant = core.handleRequestVote(req, LATER);
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        answer.thenRun(() -> sink.actions.add("answer"));
        carrier.carryOutAnswering(core.ready(), grant, answer);
        assertEquals("hardState 1 " + N1, sink.actions.get(0), sink.actions.toString());
        assertEquals("answer", sink.actions.get(sink.actions.size() - 1), sink.actions.toString());
    }

    @Test
    void aFollowerAcknowledgesEntriesOnlyOnceTheyAreDurable() throws Exception {
        RaftCore core = core(N2);
        AppendEntriesRequest req = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(entry(1)).addEntries(entry(2)).build();
        RaftCore.AppendResult r = core.handleAppendEntries(req, LATER);
        CompletableFuture<AppendEntriesResponse> ack = new CompletableFuture<>();
        carrier.carryOutAcknowledging(core.ready(), r, ack);
        assertEquals(Role.FOLLOWER, core.role());
        assertEquals(1, sink.writes.size(), sink.actions.toString());
        assertFalse(ack.isDone(), "acknowledged entries that are not on disk yet");

        storage.append(sink.writes.get(0).entries());
        core.onPersisted(1, 1, LATER);
        carrier.carryOut(core.ready());
        assertFalse(ack.isDone(), "acknowledged entry 2 with only entry 1 durable");

        core.onPersisted(2, 1, LATER);
        carrier.carryOut(core.ready());
        assertTrue(ack.isDone());
        assertTrue(ack.get().getSuccess());
        assertEquals(2, ack.get().getLastLogIndex());
    }

    @Test
    void replacedEntriesFailTheirHeldAcknowledgement() {
        RaftCore core = core(N2);
        AppendEntriesRequest first = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(entry(1)).build();
        CompletableFuture<AppendEntriesResponse> ack = new CompletableFuture<>();
        carrier.carryOutAcknowledging(core.ready(), core.handleAppendEntries(first, LATER), ack);
        assertFalse(ack.isDone());

        LogEntry replacing = entry(1).toBuilder().setTerm(2).build();
        AppendEntriesRequest second = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N3.toString()).setTerm(2)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(replacing).build();
        carrier.carryOutAcknowledging(core.ready(), core.handleAppendEntries(second, LATER + 1), new CompletableFuture<>());
        assertTrue(ack.isCompletedExceptionally(), "an acknowledgement of a replaced entry must never be sent");
        assertThrows(ExecutionException.class, ack::get);
    }

    /**
     * A snapshot from a newer leader that replaces the log (it does not hold the snapshot's last
     * entry) also replaces the entries a held acknowledgement vouches for: releasing it as
     * "durable" would let the old leader count entries this node no longer has, and commit them
     * against the newer leader's history. It fails instead.
     */
    @Test
    void aSnapshotThatReplacesTheLogFailsTheHeldAcknowledgementsOfTheDroppedEntries() {
        RaftCore core = core(N2);
        AppendEntriesRequest fromOld = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).addEntries(entry(1)).addEntries(entry(2)).build();
        CompletableFuture<AppendEntriesResponse> ack = new CompletableFuture<>();
        carrier.carryOutAcknowledging(core.ready(), core.handleAppendEntries(fromOld, LATER), ack);
        assertFalse(ack.isDone(), "entries 1-2 are not durable yet");

        assertTrue(core.acceptSnapshotChunk(N3, 2, LATER + 1), "a newer leader's snapshot is accepted");
        carrier.carryOut(core.ready());
        assertTrue(core.installSnapshot(10, 2, core.membership(), LATER + 1), "the log does not hold 10/2: it is replaced");
        carrier.carryOut(core.ready());
        assertTrue(ack.isCompletedExceptionally(), "an acknowledgement of entries the snapshot replaced was released: " + ack);
    }

    @Test
    void steppingTheCoreFromInsideACarryOutIsRefused() {
        RaftCore core = core(N1);
        ReadyCarrier[] self = new ReadyCarrier[1];
        ReadyCarrier nested = new ReadyCarrier(new RecordingSink() {
            @Override
            public void send(Ready.Message message) {
                self[0].carryOut(core.ready());
            }
        });
        self[0] = nested;
        core.onElectionTimeout(LATER);
        assertThrows(IllegalStateException.class, () -> nested.carryOut(core.ready()));
    }

    private static LogEntry entry(long index) {
        return LogEntry.newBuilder().setTerm(1).setIndex(index).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFromUtf8("e" + index)).build();
    }

    // ---------------------------------------------------------------- term and vote written later (a paused lane)

    /** A sink whose meta storage writes later: the test completes each write by hand. */
    private static final class LaterSink extends RecordingSink {
        final List<java.util.function.Consumer<RuntimeException>> writesUnderWay = new ArrayList<>();

        @Override
        public boolean writesHardStateLater() {
            return true;
        }

        @Override
        public void persistHardStateLater(long term, PeerId votedFor, java.util.function.Consumer<RuntimeException> done) {
            actions.add("hardState started " + term + " " + votedFor);
            writesUnderWay.add(done);
        }

        @Override
        public void hardStateDurable(long term, PeerId votedFor) {
            actions.add("hardState durable " + term + " " + votedFor);
        }

        void complete(RuntimeException failure) {
            writesUnderWay.remove(0).accept(failure);
        }
    }

    private final java.util.ArrayDeque<Runnable> lanePool = new java.util.ArrayDeque<>();
    private final List<Throwable> laneFailures = new ArrayList<>();
    private final SerialLane lane = new SerialLane("n", lanePool::add, t -> laneFailures.add(t));
    private final LaterSink laterSink = new LaterSink();
    private boolean halted;
    private final ReadyCarrier laterCarrier = new ReadyCarrier(laterSink, lane, () -> halted);

    private void runLane() {
        Runnable r;
        while ((r = lanePool.poll()) != null) {
            r.run();
        }
    }

    private static RequestVoteRequest voteFromN1(long term) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(term).build();
    }

    @Test
    void aVoteWrittenLaterIsAnsweredOnlyOnceDurableAndTheLaneRunsNothingMeanwhile() {
        RaftCore core = core(N2);
        List<String> laneRan = new ArrayList<>();
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        lane.execute(() -> {
            RequestVoteResponse grant = core.handleRequestVote(voteFromN1(1), LATER);
            laterCarrier.carryOutAnswering(core.ready(), grant, answer);
        });
        lane.execute(() -> laneRan.add("a task queued behind the vote"));
        runLane();
        assertEquals(List.of("hardState started 1 " + N1), laterSink.actions);
        assertFalse(answer.isDone(), "the grant left before the vote was durable");
        assertTrue(laneRan.isEmpty(), "the lane ran another task while the vote was being written");

        laterSink.complete(null);
        runLane();
        assertTrue(answer.join().getGranted());
        assertEquals("hardState durable 1 " + N1, laterSink.actions.get(1), laterSink.actions.toString());
        assertEquals(List.of("a task queued behind the vote"), laneRan);
        assertTrue(core.ready().isEmpty());
    }

    @Test
    void aCandidacyWrittenLaterSendsOnlyItsVoteRequestsBeforeTheWriteIsDurable() {
        RaftCore core = core(N1);
        winPreVote(core);
        lane.execute(() -> laterCarrier.carryOut(core.ready()));
        runLane();
        assertEquals(List.of("send VoteRequest " + N2, "send VoteRequest " + N3, "hardState started 1 " + N1), laterSink.actions);
        laterSink.complete(null);
        runLane();
        assertEquals(List.of("hardState durable 1 " + N1, "event RoleChanged"), laterSink.actions.subList(3, 5),
                laterSink.actions.toString());
        assertEquals(2, laterSink.count("send VoteRequest"), "each vote request leaves once: " + laterSink.actions);
    }

    @Test
    void aFailedWriteLaterLetsNothingOfTheBatchHappenFailsTheAnswerAndReachesTheLanesFailureHandler() {
        RaftCore core = core(N2);
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        lane.execute(() -> laterCarrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFromN1(1), LATER), answer));
        runLane();
        laterSink.complete(new StorageException("meta write failed: disk full"));
        runLane();
        assertEquals(List.of("hardState started 1 " + N1), laterSink.actions, "something of a vote not on disk happened");
        assertTrue(answer.isCompletedExceptionally(), "the caller must hear the vote failed");
        assertEquals(1, laneFailures.size());
        assertTrue(laneFailures.get(0) instanceof StorageException, laneFailures.toString());
        assertTrue(core.ready().isEmpty());
    }

    @Test
    void aStepLaterInTheSameTaskWaitsForThePausedBatchAndKeepsTheOrder() throws Exception {
        RaftCore core = core(N2);
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        answer.thenRun(() -> laterSink.actions.add("vote answered"));
        java.util.concurrent.ExecutorService disk = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            lane.execute(() -> {
                laterCarrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFromN1(1), LATER), answer);
                disk.execute(() -> laterSink.complete(null)); // durable a moment later, on another thread
                core.onElectionTimeout(LATER + 1); // a second step in the same task (a follower of term 1: nothing to say)
                laterCarrier.carryOutNow(core.ready());
                laterSink.actions.add("second step done");
            });
            runLane();
        } finally {
            disk.shutdown();
        }
        int answered = laterSink.actions.indexOf("vote answered");
        assertTrue(answered > laterSink.actions.indexOf("hardState durable 1 " + N1), laterSink.actions.toString());
        assertTrue(answered < laterSink.actions.indexOf("second step done"), laterSink.actions.toString());
        runLane(); // the resumed continuation finds its work done
        assertEquals(1, laterSink.count("vote answered"));
        assertTrue(laneFailures.isEmpty(), laneFailures.toString());
    }

    @Test
    void aBatchStillPausedWhenTheNodeIsHaltedIsDropped() {
        RaftCore core = core(N2);
        CompletableFuture<RequestVoteResponse> answer = new CompletableFuture<>();
        lane.execute(() -> laterCarrier.carryOutAnswering(core.ready(), core.handleRequestVote(voteFromN1(1), LATER), answer));
        runLane();
        halted = true;
        laterSink.complete(null);
        runLane();
        assertEquals(List.of("hardState started 1 " + N1), laterSink.actions);
        assertTrue(answer.isCompletedExceptionally());
    }
}
