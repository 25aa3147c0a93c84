package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The liveness heartbeat over real gRPC on loopback: silent, closed and restarted peers are
 * reported once each, answering peers never, and nothing is pinged with the watch off or after
 * close. Time passing is proven by counting pings (ours or a bystander's), never by sleeping.
 *
 * <p>Listeners are mostly added once the peer has answered a first ping: on a loaded machine
 * opening the connection can take longer than the silence allowed, and the peer is then
 * (rightly) reported lost and restored before the test proper begins.
 */
class LivenessWatchTest {

    private static final long INTERVAL_MS = 25;
    /** Short enough for quick tests, long enough that a loaded machine's pauses do not look like silence. */
    private static final long SILENCE_MS = 600;
    private static final RpcOptions FAST = RpcOptions.builder().liveness(INTERVAL_MS, SILENCE_MS).build();
    /** Pings sent (to an endpoint that answers or refuses at once) while the silence allowance passes about twice. */
    private static final int PINGS_PER_TWO_SILENCES = (int) (2 * SILENCE_MS / INTERVAL_MS);
    private static final long WAIT_MS = 15_000;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private GrpcRaftTransport start(RpcOptions options) {
        GrpcRaftTransport t = GrpcRaftTransport.builder().listen("127.0.0.1", 0).options(options).start();
        toClose.add(t);
        return t;
    }

    private FakeLivenessPeer fakePeer() {
        FakeLivenessPeer p = new FakeLivenessPeer();
        toClose.add(p);
        return p;
    }

    private static RecordingConnectionListener listenTo(GrpcRaftTransport t) {
        RecordingConnectionListener told = new RecordingConnectionListener();
        t.addConnectionListener(told);
        return told;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT_MS + " ms: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(2); // poll interval of the condition wait
        }
    }

    @Test
    void anIdlePeerThatAnswersIsNeverReported() throws Exception {
        GrpcRaftTransport a = start(RpcOptions.defaults());
        GrpcRaftTransport b = start(RpcOptions.defaults());
        RecordingConnectionListener onB = listenTo(b);
        a.prepareConnection(Requests.peerAt(b));
        await("b answers a ping", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        // No Raft traffic at all: only the pings keep b alive in a's eyes, for three silence allowances.
        long pings = 1 + 3 * RpcOptions.defaults().livenessSilenceMs() / RpcOptions.defaults().livenessIntervalMs();
        await("a's pings answered", () -> a.livenessPingsAnswered() >= pings);

        assertEquals(List.of(), onA.events);
        assertEquals(List.of(), onB.events);
        assertEquals(0, b.livenessPingsSent(), "b has no channel to a, so it watches nothing");
    }

    /**
     * This process's only event loop is held busy for two silence allowances while the peer is
     * fine: no answer can be read (nor ping sent) meanwhile, and that is this process's lag, not
     * the peer's silence. Without the lag probes the peer was reported silent.
     */
    @Test
    void aPeerIsNotReportedSilentWhileThisProcessesEventLoopsAreBehind() throws Exception {
        GrpcRaftTransport a = start(RpcOptions.builder().liveness(INTERVAL_MS, SILENCE_MS).ioThreads(1).build());
        GrpcRaftTransport b = start(FAST);
        a.prepareConnection(Requests.peerAt(b));
        await("b answers a ping", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        a.eventLoops().loops().get(0).execute(() -> {
            try {
                release.await(); // the loop's backlog: it runs nothing else until released
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long lagged = a.livenessIoLagged();
        try {
            // The watch runs on its own timer thread: it keeps checking while the loop is held.
            await("two silence allowances of checks with the loop behind", () -> a.livenessIoLagged() >= lagged + PINGS_PER_TWO_SILENCES);
        } finally {
            release.countDown();
        }
        long answered = a.livenessPingsAnswered();
        await("answers read again", () -> a.livenessPingsAnswered() >= answered + PINGS_PER_TWO_SILENCES);

        assertEquals(List.of(), onA.events, "a peer that answered all along was reported");
    }

    @Test
    void aClosedPeerIsReportedLostOnceAndSilenceDoesNotReportItAgain() throws Exception {
        GrpcRaftTransport a = start(FAST);
        GrpcRaftTransport b = start(FAST);
        a.prepareConnection(Requests.peerAt(b));
        await("b answers a ping", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        b.close();
        await("a is told b is lost", () -> onA.events.contains("lost " + b.endpoint()));
        long sent = a.livenessPingsSent();
        await("a keeps pinging the dead endpoint", () -> a.livenessPingsSent() >= sent + PINGS_PER_TWO_SILENCES);

        assertEquals(List.of("lost " + b.endpoint()), onA.events, "the break and the silence after it are one loss");
    }

    @Test
    void aPeerThatStopsAnsweringIsReportedLostOnceAndRestoredOnceWhenItAnswersAgain() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        a.prepareConnection(PeerId.parse(peer.endpoint()));
        await("the peer answers", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        peer.answer(false); // its connection stays open: no reset, no GOAWAY, only silence
        await("a is told the silent peer is lost", () -> onA.events.contains("silent " + peer.endpoint()));
        int pinged = peer.pingsFrom(a.endpoint());
        // Each unanswered ping waits out its deadline (the silence allowance) before the next goes.
        await("two more silence allowances pass", () -> peer.pingsFrom(a.endpoint()) >= pinged + 2);
        assertEquals(List.of("silent " + peer.endpoint()), onA.events, "reported once while it stays silent");

        peer.answer(true);
        await("a is told the peer is back", () -> onA.events.contains("restored " + peer.endpoint()));
        long answered = a.livenessPingsAnswered();
        await("more answers", () -> a.livenessPingsAnswered() >= answered + PINGS_PER_TWO_SILENCES);
        assertEquals(List.of("silent " + peer.endpoint(), "restored " + peer.endpoint()), onA.events);
    }

    @Test
    void aPeerRestartedAtTheSamePortIsReportedLostAndRestored() throws Exception {
        GrpcRaftTransport a = start(FAST);
        GrpcRaftTransport b = start(FAST);
        a.prepareConnection(Requests.peerAt(b));
        await("b answers a ping", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);
        String endpoint = b.endpoint();
        long oldIncarnation = b.incarnation();

        b.close();
        GrpcRaftTransport restarted = bindAgain(b.port());
        assertNotEquals(oldIncarnation, restarted.incarnation());
        await("a is told b is back", () -> onA.events.contains("restored " + endpoint));
        long answered = a.livenessPingsAnswered();
        await("more answers", () -> a.livenessPingsAnswered() >= answered + PINGS_PER_TWO_SILENCES);

        assertEquals(List.of("lost " + endpoint, "restored " + endpoint), onA.events);
    }

    @Test
    void aRestartFasterThanTheSilenceIsReportedAsALossAndAReturn() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        a.prepareConnection(PeerId.parse(peer.endpoint()));
        await("the peer answers", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        peer.restartAs(2002); // a new process answering on the same connection's address, without a gap
        await("a is told", () -> onA.events.contains("restored " + peer.endpoint()));
        long answered = a.livenessPingsAnswered();
        await("more answers", () -> a.livenessPingsAnswered() >= answered + PINGS_PER_TWO_SILENCES);

        assertEquals(List.of("lost " + peer.endpoint(), "restored " + peer.endpoint()), onA.events,
                "whatever the old process held is gone: its groups must see a loss before the return");
    }

    @Test
    void onePingPerEndpointHoweverManyPeersItHosts() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        PeerId at = PeerId.parse(peer.endpoint());
        for (int i = 0; i < 50; i++) {
            a.prepareConnection(new PeerId(at.host(), at.port(), i));
        }
        await("pings answered", () -> a.livenessPingsAnswered() >= 20);

        assertEquals(1, a.outboundChannels());
        long sent = a.livenessPingsSent();
        int received = peer.pingsFrom(a.endpoint());
        assertTrue(received <= sent && received >= a.livenessPingsAnswered(),
                "every ping a sent went to the one endpoint: sent " + sent + ", received " + received);
    }

    @Test
    void thePingsToAnEndpointShareOneLongLivedCall() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        a.prepareConnection(PeerId.parse(peer.endpoint()));
        await("pings answered", () -> a.livenessPingsAnswered() >= 20);

        assertEquals(1, peer.watchCalls(), "twenty pings, one call");
        assertTrue(peer.pingsFrom(a.endpoint()) >= 20);
    }

    @Test
    void aPeerWhosePingsProveTheRoundTripIsNotPingedBackUntilTheyStop() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        a.prepareConnection(PeerId.parse(peer.endpoint()));
        await("a's pings answered", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);

        peer.startPinging(a.endpoint(), INTERVAL_MS);
        await("the peer's pings answered", () -> peer.answersReceived() >= 3);
        int pingedBefore = peer.pingsFrom(a.endpoint());
        await("many more of the peer's pings answered", () -> peer.answersReceived() >= 3 + PINGS_PER_TWO_SILENCES);
        assertTrue(peer.pingsFrom(a.endpoint()) <= pingedBefore + 1,
                "a pinged a peer whose own pings showed the round trip: " + (peer.pingsFrom(a.endpoint()) - pingedBefore) + " pings");
        assertEquals(List.of(), onA.events, "its pings kept it alive for two silence allowances");

        peer.stopPinging();
        await("a pings it again", () -> peer.pingsFrom(a.endpoint()) >= pingedBefore + 5);
        assertEquals(List.of(), onA.events);
    }

    @Test
    void aPeerWithoutTheLongLivedCallIsPingedWithCallsOfItsOwnAndWatchedAsBefore() throws Exception {
        FakeLivenessPeer older = new FakeLivenessPeer(false);
        toClose.add(older);
        GrpcRaftTransport a = start(FAST);
        a.prepareConnection(PeerId.parse(older.endpoint()));
        await("pings answered", () -> a.livenessPingsAnswered() >= 10);
        RecordingConnectionListener onA = listenTo(a);
        assertTrue(older.pingsFrom(a.endpoint()) >= 10, "the unary pings reached it");

        older.answer(false);
        await("a is told the silent peer is lost", () -> onA.events.contains("silent " + older.endpoint()));
        older.answer(true);
        await("a is told the peer is back", () -> onA.events.contains("restored " + older.endpoint()));
        assertEquals(List.of("silent " + older.endpoint(), "restored " + older.endpoint()), onA.events);
    }

    @Test
    void withTheWatchOffNothingIsPingedNorReportedAsSilent() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport off = start(RpcOptions.builder().livenessWatch(false).build());
        GrpcRaftTransport bystander = start(FAST);
        RecordingConnectionListener onOff = listenTo(off);
        assertFalse(off.reportsSilentPeers());
        assertTrue(bystander.reportsSilentPeers());
        assertEquals(SILENCE_MS + 2 * INTERVAL_MS, bystander.silentPeerDetectMs(), "one check finds the silence, the next confirms this process is not the one behind");

        off.prepareConnection(PeerId.parse(peer.endpoint()));
        bystander.prepareConnection(PeerId.parse(peer.endpoint()));
        await("the bystander's pings answered", () -> bystander.livenessPingsAnswered() >= 3);
        peer.answer(false);
        int pinged = peer.pingsFrom(bystander.endpoint());
        await("two silence allowances pass", () -> peer.pingsFrom(bystander.endpoint()) >= pinged + 2);

        assertEquals(1, off.outboundChannels(), "the channel is open");
        assertEquals(0, peer.pingsFrom(off.endpoint()));
        assertEquals(0, off.livenessPingsSent());
        assertEquals(List.of(), onOff.events);
    }

    @Test
    void aClosedTransportStopsPingingAndReportsNothing() throws Exception {
        FakeLivenessPeer peer = fakePeer();
        GrpcRaftTransport a = start(FAST);
        GrpcRaftTransport bystander = start(FAST);
        a.prepareConnection(PeerId.parse(peer.endpoint()));
        bystander.prepareConnection(PeerId.parse(peer.endpoint()));
        await("a's pings answered", () -> a.livenessPingsAnswered() >= 1);
        RecordingConnectionListener onA = listenTo(a);
        String aEndpoint = a.endpoint();

        peer.answer(false); // silent from now: a report would come after the allowance, were a still open
        a.close();
        int bystanderPings = peer.pingsFrom(bystander.endpoint());
        await("a ping of the bystander's arrives", () -> peer.pingsFrom(bystander.endpoint()) > bystanderPings);
        int fromA = peer.pingsFrom(aEndpoint); // anything a sent before closing has arrived by now
        await("two silence allowances pass", () -> peer.pingsFrom(bystander.endpoint()) >= bystanderPings + 3);

        assertEquals(fromA, peer.pingsFrom(aEndpoint), "no ping after close");
        assertEquals(List.of(), onA.events);
    }

    @Test
    void livenessOptionsAreValidatedWithMessagesNamingThem() {
        RpcOptions d = RpcOptions.defaults();
        assertTrue(d.livenessWatchEnabled());
        assertEquals(100, d.livenessIntervalMs());
        assertEquals(500, d.livenessSilenceMs());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RpcOptions.builder().liveness(100, 100));
        assertEquals("livenessSilenceMs (100 ms) must be longer than livenessIntervalMs (100 ms): a peer needs more than one ping interval to answer",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RpcOptions.builder().liveness(0, 500));
        assertEquals("livenessIntervalMs must be positive, got 0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RpcOptions.builder().liveness(100, -1));
        assertEquals("livenessSilenceMs must be positive, got -1", e.getMessage());

        RpcOptions o = RpcOptions.builder().liveness(50, 300).livenessWatch(false).build();
        assertEquals(50, o.livenessIntervalMs());
        assertEquals(300, o.livenessSilenceMs());
        assertFalse(o.livenessWatchEnabled());
    }

    /** Binds a port that was ours a moment ago; the OS may take a moment to release it. */
    private GrpcRaftTransport bindAgain(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                GrpcRaftTransport t = GrpcRaftTransport.builder().listen("127.0.0.1", port).options(FAST).start();
                toClose.add(t);
                return t;
            } catch (UncheckedIOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(20); // retry interval while the port is released
            }
        }
    }
}
