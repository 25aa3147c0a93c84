package io.wheelraft.testkit.transport;

import com.google.protobuf.ByteString;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.TimeoutNowRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every {@link RaftTransport} must do, as its Javadoc (and {@link TransportException}'s kinds)
 * state it: extend this class, say how to start a host (one process of the network) with its transport, how to kill one and
 * how time passes, and JUnit 5 runs every check against your implementation. WheelRaft runs it
 * against the in-process, simulated and gRPC transports. Message order, flow control, TLS and
 * the like stay in each implementation's own tests (the SPI only asks order as a "should").
 * The checks of silent-peer reports run only on a transport whose
 * {@link RaftTransport#reportsSilentPeers()} is true, and are skipped on the others.
 *
 * <p>Threading: JUnit runs each test on one thread; transports may complete futures and call
 * handlers and listeners on their own threads, so the checks only poll thread-safe state, through
 * {@link #await}.
 */
public abstract class RaftTransportContract {

    /** The group most checks talk in. */
    protected static final String GROUP = "contract";

    /** One host (process) of the network under test: its transport, reachable by the others at {@code endpoint}. */
    public record Host(RaftTransport transport, String endpoint) {

        /** The peer id of the node with {@code index} hosted by this process. */
        public PeerId peer(int index) {
            PeerId p = PeerId.parse(endpoint);
            return new PeerId(p.host(), p.port(), index);
        }
    }

    /** Starts one more host (a process of the network), with a transport reachable by the others. */
    protected abstract Host startHost() throws Exception;

    /**
     * The host dies as a killed OS process does: it stops answering and its connections break,
     * so the peers that had a connection to it can be told.
     */
    protected abstract void kill(Host host) throws Exception;

    /** A {@code host:port} where no process of the network listens. */
    protected abstract String unreachableEndpoint() throws Exception;

    /**
     * Lets time pass until {@code condition} holds or {@code timeoutMs} have passed, and returns
     * the condition's last value. Real transports poll it; a simulated one runs its clock.
     */
    protected abstract boolean await(BooleanSupplier condition, long timeoutMs) throws Exception;

    /** {@link #await} for a transport on real threads and time: polls {@code condition} every millisecond up to the deadline. */
    protected static boolean pollInRealTime(BooleanSupplier condition, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(1); // poll interval of the condition wait
        }
        return true;
    }

    /** Releases everything the test started (called once, after each test). */
    protected abstract void releaseAll() throws Exception;

    /** Generous bound for an answer that should come at once (a loaded CI machine is slow, not wrong). */
    private static final long ANSWER_MS = 10_000;
    /** The deadline given to calls that must not time out. */
    private static final long CALL_TIMEOUT_MS = 5_000;

    private Host sender;
    private Host receiver;
    private RecordingHandler handler;

    @BeforeEach
    final void startTwoHosts() throws Exception {
        sender = startHost();
        receiver = startHost();
        handler = new RecordingHandler(7);
        receiver.transport().register(GROUP, receiver.peer(0), handler);
    }

    @AfterEach
    final void release() throws Exception {
        releaseAll();
    }

    // ---- requests ------------------------------------------------------------------------------

    private static AppendEntriesRequest append(String group, PeerId from, PeerId to, long sequence) {
        return AppendEntriesRequest.newBuilder().setGroupId(group).setServerId(from.toString()).setPeerId(to.toString())
                .setTerm(3).setPrevLogIndex(sequence).setPrevLogTerm(3).setSequence(sequence)
                .addEntries(LogEntry.newBuilder().setIndex(sequence + 1).setTerm(3).setType(EntryType.ENTRY_TYPE_DATA)
                        .setData(ByteString.copyFromUtf8("entry " + (sequence + 1))))
                .build();
    }

    private AppendEntriesRequest append(PeerId to, long sequence) {
        return append(GROUP, sender.peer(0), to, sequence);
    }

    /** Waits for {@code call} to complete and returns its answer. */
    private <T> T answer(CompletableFuture<T> call) throws Exception {
        assertTrue(await(call::isDone, ANSWER_MS), "no answer within " + ANSWER_MS + " ms");
        return call.join();
    }

    /** Waits for {@code call} to fail and returns its {@link TransportException}. */
    private TransportException failure(CompletableFuture<?> call) throws Exception {
        assertTrue(await(call::isDone, ANSWER_MS), "the call neither failed nor succeeded within " + ANSWER_MS + " ms");
        try {
            Object answer = call.join();
            throw new AssertionError("expected the call to fail, it was answered: " + answer);
        } catch (CompletionException e) {
            if (e.getCause() instanceof TransportException te) {
                return te;
            }
            throw new AssertionError("a failed call must fail with a TransportException, got " + e.getCause(), e.getCause());
        }
    }

    // ---- every request type ----------------------------------------------------------------------

    @Test
    void everyRequestTypeReachesTheRegisteredNodeAndItsAnswerComesBack() throws Exception {
        PeerId from = sender.peer(0);
        PeerId to = receiver.peer(0);
        RaftTransport t = sender.transport();

        RequestVoteRequest vote = RequestVoteRequest.newBuilder().setGroupId(GROUP).setServerId(from.toString())
                .setPeerId(to.toString()).setTerm(9).setLastLogIndex(4).setLastLogTerm(2).setPreVote(true).build();
        var voteAnswer = answer(t.requestVote(to, vote, CALL_TIMEOUT_MS));
        assertEquals(7, voteAnswer.getTerm());
        assertTrue(voteAnswer.getPreVote());

        AppendEntriesRequest append = append(to, 5);
        var appendAnswer = answer(t.appendEntries(to, append, CALL_TIMEOUT_MS));
        assertEquals(5, appendAnswer.getSequence());
        assertEquals(6, appendAnswer.getLastLogIndex());

        InstallSnapshotRequest chunk = InstallSnapshotRequest.newBuilder().setGroupId(GROUP).setServerId(from.toString())
                .setPeerId(to.toString()).setTerm(3).setFileName("data").setOffset(100)
                .setData(ByteString.copyFromUtf8("1234567")).build();
        var chunkAnswer = answer(t.installSnapshot(to, chunk, CALL_TIMEOUT_MS));
        assertEquals(107, chunkAnswer.getNextOffset());
        assertEquals("data", chunkAnswer.getFileName());

        TimeoutNowRequest timeoutNow = TimeoutNowRequest.newBuilder().setGroupId(GROUP).setServerId(from.toString())
                .setPeerId(to.toString()).setTerm(3).build();
        assertTrue(answer(t.timeoutNow(to, timeoutNow, CALL_TIMEOUT_MS)).getSuccess());

        ReadIndexRequest read = ReadIndexRequest.newBuilder().setGroupId(GROUP).setServerId(from.toString())
                .setPeerId(to.toString()).setCount(2).build();
        assertEquals(7, answer(t.readIndex(to, read, CALL_TIMEOUT_MS)).getIndex());

        assertEquals(List.of(vote, append, chunk, timeoutNow, read), handler.received(),
                "the node receives each request once and unchanged");
    }

    @Test
    void requestsAreRoutedByGroupAndPeer() throws Exception {
        RecordingHandler otherGroup = new RecordingHandler(11);
        RecordingHandler otherPeer = new RecordingHandler(12);
        receiver.transport().register("other-group", receiver.peer(0), otherGroup);
        receiver.transport().register(GROUP, receiver.peer(1), otherPeer);

        assertEquals(7, answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS)).getTerm());
        assertEquals(11, answer(sender.transport().appendEntries(receiver.peer(0),
                append("other-group", sender.peer(0), receiver.peer(0), 1), CALL_TIMEOUT_MS)).getTerm());
        assertEquals(12, answer(sender.transport().appendEntries(receiver.peer(1), append(receiver.peer(1), 1), CALL_TIMEOUT_MS)).getTerm());
        assertEquals(1, handler.received().size());
        assertEquals(1, otherGroup.received().size());
        assertEquals(1, otherPeer.received().size());
    }

    // ---- failures --------------------------------------------------------------------------------

    @Test
    void aGroupNotHostedThereIsNotFound() throws Exception {
        TransportException e = failure(sender.transport().appendEntries(receiver.peer(0),
                append("no-such-group", sender.peer(0), receiver.peer(0), 1), CALL_TIMEOUT_MS));
        assertEquals(Kind.NOT_FOUND, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("no-such-group"), "the message names the group: " + e.getMessage());
        assertTrue(handler.received().isEmpty());
    }

    @Test
    void aPeerNotHostedThereIsNotFound() throws Exception {
        PeerId absent = receiver.peer(3);
        assertEquals(Kind.NOT_FOUND, failure(sender.transport().appendEntries(absent, append(absent, 1), CALL_TIMEOUT_MS)).kind());
    }

    @Test
    void anUnregisteredNodeIsNotFound() throws Exception {
        receiver.transport().unregister(GROUP, receiver.peer(0));
        assertEquals(Kind.NOT_FOUND, failure(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS)).kind());
        assertTrue(handler.received().isEmpty());
    }

    @Test
    void anEndpointWhereNothingListensIsUnreachable() throws Exception {
        PeerId nobody = PeerId.parse(unreachableEndpoint());
        assertEquals(Kind.UNREACHABLE, failure(sender.transport().appendEntries(nobody, append(nobody, 1), CALL_TIMEOUT_MS)).kind());
    }

    @Test
    void anUnansweredCallTimesOutAtItsDeadline() throws Exception {
        handler.neverAnswer();
        CompletableFuture<?> call = sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), 200);
        assertFalse(call.isDone(), "a call returns at once, before any answer");
        assertEquals(Kind.TIMEOUT, failure(call).kind());
    }

    @Test
    void aRequestTheNodeRejectsAsMalformedFailsAsRejectedWithItsReason() throws Exception {
        handler.failWith(new IllegalArgumentException("entry 2 has index 0"));
        TransportException e = failure(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));
        assertEquals(Kind.REJECTED, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("entry 2 has index 0"), "the reason reaches the sender: " + e.getMessage());
    }

    /** A node that is stopping refuses requests with NOT_FOUND: the sender sees that kind, not a generic failure. */
    @Test
    void aNodeThatRefusesAsNotRunningIsNotFound() throws Exception {
        handler.failWith(new TransportException(Kind.NOT_FOUND, GROUP + "/" + receiver.peer(0) + " is not running"));
        TransportException e = failure(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));
        assertEquals(Kind.NOT_FOUND, e.kind(), e.getMessage());
    }

    @Test
    void callsOnAClosedTransportFailAsClosed() throws Exception {
        sender.transport().close();
        assertEquals(Kind.CLOSED, failure(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS)).kind());
        assertTrue(handler.received().isEmpty());
    }

    // ---- broken connections ------------------------------------------------------------------------

    /** Records the endpoints a listener is told about. */
    private static final class LostEndpoints {
        final List<String> lost = new CopyOnWriteArrayList<>();

        void onConnectionLost(String endpoint) {
            lost.add(endpoint);
        }

        long count(String endpoint) {
            return lost.stream().filter(endpoint::equals).count();
        }
    }

    @Test
    void theSenderIsToldWhenTheProcessItTalksToDiesAndCallsToItFailFast() throws Exception {
        LostEndpoints onSender = new LostEndpoints();
        sender.transport().addConnectionListener(onSender::onConnectionLost);
        answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));

        kill(receiver);
        assertTrue(await(() -> onSender.lost.contains(receiver.endpoint()), ANSWER_MS),
                "the sender was not told " + receiver.endpoint() + " broke; told: " + onSender.lost);

        // A dead peer fails calls with UNREACHABLE: it does not leave them waiting for their deadline.
        TransportException e = failure(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 2), 60_000));
        assertEquals(Kind.UNREACHABLE, e.kind(), e.getMessage());
    }

    @Test
    void theReceiverIsToldWhenTheProcessThatTalkedToItDies() throws Exception {
        LostEndpoints onReceiver = new LostEndpoints();
        receiver.transport().addConnectionListener(onReceiver::onConnectionLost);
        answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));

        kill(sender);
        assertTrue(await(() -> onReceiver.lost.contains(sender.endpoint()), ANSWER_MS),
                "the receiver was not told " + sender.endpoint() + " broke; told: " + onReceiver.lost);
    }

    @Test
    void aRemovedListenerIsNotTold() throws Exception {
        LostEndpoints kept = new LostEndpoints();
        LostEndpoints removed = new LostEndpoints();
        sender.transport().addConnectionListener(kept::onConnectionLost);
        io.wheelraft.core.spi.ConnectionListener removedListener = removed::onConnectionLost;
        sender.transport().addConnectionListener(removedListener);
        sender.transport().removeConnectionListener(removedListener);
        answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));

        kill(receiver);
        assertTrue(await(() -> kept.lost.contains(receiver.endpoint()), ANSWER_MS), "told: " + kept.lost);
        assertEquals(List.of(), removed.lost);
    }

    @Test
    void healthyTrafficReportsNoBrokenConnection() throws Exception {
        LostEndpoints onSender = new LostEndpoints();
        LostEndpoints onReceiver = new LostEndpoints();
        sender.transport().addConnectionListener(onSender::onConnectionLost);
        receiver.transport().addConnectionListener(onReceiver::onConnectionLost);
        for (int i = 1; i <= 50; i++) {
            assertEquals(i, answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), i), CALL_TIMEOUT_MS)).getSequence());
        }
        assertEquals(List.of(), onSender.lost);
        assertEquals(List.of(), onReceiver.lost);
    }

    // ---- silent peers (only for transports that report them) ----------------------------------------

    @Test
    void aTransportThatReportsSilentPeersStatesItsDetectionBound() {
        RaftTransport t = sender.transport();
        assumeTrue(t.reportsSilentPeers(), "this transport does not report silent peers");
        long bound = t.silentPeerDetectMs();
        assertTrue(bound > 0 && bound < Long.MAX_VALUE, "silentPeerDetectMs must be a real bound, got " + bound);
    }

    /** Quiet groups send nothing: the transport's own heartbeat must not take a peer that merely has nothing to say for a dead one. */
    @Test
    void aPeerWithNoTrafficThatIsAliveIsNotReportedLost() throws Exception {
        assumeTrue(sender.transport().reportsSilentPeers(), "this transport does not report silent peers");
        LostEndpoints onSender = new LostEndpoints();
        LostEndpoints onReceiver = new LostEndpoints();
        sender.transport().addConnectionListener(onSender::onConnectionLost);
        receiver.transport().addConnectionListener(onReceiver::onConnectionLost);
        answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));

        long quietMs = 3 * sender.transport().silentPeerDetectMs();
        assertFalse(await(() -> !onSender.lost.isEmpty() || !onReceiver.lost.isEmpty(), quietMs),
                "a live peer was reported lost after " + quietMs + " ms without traffic; sender told " + onSender.lost
                        + ", receiver told " + onReceiver.lost);
    }

    /** "Reported once per loss": the break and the silence that follows it are the same loss. */
    @Test
    void aDeadPeerIsReportedLostOnceWhileItStaysDown() throws Exception {
        assumeTrue(sender.transport().reportsSilentPeers(), "this transport does not report silent peers");
        LostEndpoints onSender = new LostEndpoints();
        sender.transport().addConnectionListener(onSender::onConnectionLost);
        answer(sender.transport().appendEntries(receiver.peer(0), append(receiver.peer(0), 1), CALL_TIMEOUT_MS));

        kill(receiver);
        assertTrue(await(() -> onSender.count(receiver.endpoint()) > 0, ANSWER_MS),
                "the sender was not told " + receiver.endpoint() + " died; told: " + onSender.lost);
        long downMs = 2 * sender.transport().silentPeerDetectMs();
        assertFalse(await(() -> onSender.count(receiver.endpoint()) > 1, downMs),
                "reported more than once while it stayed down for " + downMs + " ms: " + onSender.lost);
    }
}
