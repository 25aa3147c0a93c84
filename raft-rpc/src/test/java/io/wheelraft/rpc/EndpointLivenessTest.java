package io.wheelraft.rpc;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decisions of the liveness watch for one endpoint, on times given by hand: when silence is a
 * loss, when an answer is a return or a restart, and that one loss is reported once whichever part
 * of the transport saw it. No network, no clock.
 */
class EndpointLivenessTest {

    private static final String PEER = "10.0.0.7:7001";
    private static final long SILENCE_MS = 500;
    private static final long OLD_PROCESS = 41;
    private static final long NEW_PROCESS = 42;

    private final ConnectionListeners listeners = new ConnectionListeners();
    private final RecordingConnectionListener recorder = new RecordingConnectionListener();
    private final List<String> told = recorder.events;
    private final EndpointLiveness peer = new EndpointLiveness(PEER, listeners, SILENCE_MS, at(0));

    EndpointLivenessTest() {
        listeners.add(recorder);
        listeners.watch(PEER);
    }

    private static long at(long ms) {
        return TimeUnit.MILLISECONDS.toNanos(ms) + 1_000_000_000L; // nanoTime values may be anything: not zero-based
    }

    @Test
    void anEndpointThatAnswersIsNeverReported() {
        for (long ms = 100; ms <= 5_000; ms += 100) {
            peer.answered(OLD_PROCESS, at(ms));
            peer.checkSilence(at(ms + 50));
        }
        assertEquals(List.of(), told);
    }

    @Test
    void silenceIsReportedOnceWhenItReachesTheAllowanceAndTheNextAnswerRestoresOnce() {
        peer.answered(OLD_PROCESS, at(100));
        peer.checkSilence(at(100 + SILENCE_MS - 1));
        assertEquals(List.of(), told, "silent for less than the allowance");

        peer.checkSilence(at(100 + SILENCE_MS));
        peer.checkSilence(at(100 + SILENCE_MS + 100));
        peer.checkSilence(at(100 + 10 * SILENCE_MS));
        assertEquals(List.of("silent " + PEER), told, "one report per loss, however long it lasts");
        assertTrue(listeners.reportedLost(PEER));

        peer.answered(OLD_PROCESS, at(20_000));
        peer.answered(OLD_PROCESS, at(20_100));
        assertEquals(List.of("silent " + PEER, "restored " + PEER), told);
        assertFalse(listeners.reportedLost(PEER));
    }

    @Test
    void afterThisProcessStalledTheEndpointGetsTheWholeAllowanceAgain() {
        peer.answered(OLD_PROCESS, at(100));
        // This process stalled from 150 to 900 ms (its own check ran that late): an answer sent
        // meanwhile may sit unread here, so silence counts from 900 ms, not from 100 ms.
        peer.checkSilence(at(900), at(900));
        peer.checkSilence(at(900 + SILENCE_MS - 1), at(900));
        assertEquals(List.of(), told, "not silent for a whole allowance since this process listened again");
        peer.checkSilence(at(900 + SILENCE_MS), at(900));
        assertEquals(List.of("silent " + PEER), told, "silent for the whole allowance after the stall");
    }

    @Test
    void aStallBeforeTheLastAnswerChangesNothing() {
        peer.answered(OLD_PROCESS, at(1_000));
        peer.checkSilence(at(1_000 + SILENCE_MS), at(500));
        assertEquals(List.of("silent " + PEER), told);
    }

    @Test
    void anEndpointThatNeverAnsweredIsSilentSinceItWasFirstWatched() {
        peer.checkSilence(at(SILENCE_MS));
        assertEquals(List.of("silent " + PEER), told);
        peer.answered(OLD_PROCESS, at(SILENCE_MS + 10));
        assertEquals(List.of("silent " + PEER, "restored " + PEER), told, "its first answer is a return, not a restart");
    }

    @Test
    void aRaftAnswerKeepsTheEndpointAliveButOnlyAPingAnswerRestoresIt() {
        peer.answered(OLD_PROCESS, at(0));
        peer.heard(at(400));
        peer.checkSilence(at(800));
        assertEquals(List.of(), told, "heard 400 ms ago: not silent yet");

        peer.checkSilence(at(900));
        peer.heard(at(950));
        assertEquals(List.of("silent " + PEER), told, "a Raft answer names no incarnation: it cannot tell a return from a restart");
        peer.answered(OLD_PROCESS, at(960));
        assertEquals(List.of("silent " + PEER, "restored " + PEER), told);
    }

    @Test
    void aBrokenConnectionAlreadyReportedIsNotReportedAgainBySilence() {
        peer.answered(OLD_PROCESS, at(0));
        listeners.fireLost(PEER, "outbound channel failed");
        listeners.fireLost(PEER, "inbound connection closed"); // the same death seen from the other direction
        peer.checkSilence(at(SILENCE_MS));
        peer.checkSilence(at(2 * SILENCE_MS));
        assertEquals(List.of("lost " + PEER), told);

        peer.answered(NEW_PROCESS, at(3 * SILENCE_MS));
        assertEquals(List.of("lost " + PEER, "restored " + PEER), told, "a restart already reported lost is only restored");

        listeners.fireLost(PEER, "outbound channel failed");
        assertEquals(List.of("lost " + PEER, "restored " + PEER, "lost " + PEER), told, "a loss after the return is a new loss");
    }

    @Test
    void aSilentEndpointWhoseConnectionThenBreaksIsReportedLostTooAndARestartAfterSilenceAsALoss() {
        peer.answered(OLD_PROCESS, at(0));
        peer.checkSilence(at(SILENCE_MS));
        listeners.fireLost(PEER, "outbound channel failed");
        listeners.fireLost(PEER, "inbound connection closed");
        assertEquals(List.of("silent " + PEER, "lost " + PEER), told, "the break says more than the silence: reported once");
        peer.answered(OLD_PROCESS, at(2 * SILENCE_MS));
        peer.checkSilence(at(3 * SILENCE_MS + 10));
        peer.answered(NEW_PROCESS, at(3 * SILENCE_MS + 20));
        assertEquals(List.of("silent " + PEER, "lost " + PEER, "restored " + PEER, "silent " + PEER, "lost " + PEER, "restored " + PEER),
                told, "a process that restarted while silent was lost, not only slow");
    }

    @Test
    void aRestartFasterThanTheSilenceIsReportedAsALossAndAReturn() {
        peer.answered(OLD_PROCESS, at(0));
        peer.answered(NEW_PROCESS, at(100));
        peer.answered(NEW_PROCESS, at(200));
        assertEquals(List.of("lost " + PEER, "restored " + PEER), told);
    }

    @Test
    void anAnswerThatNamesNoIncarnationIsNoRestart() {
        peer.answered(OLD_PROCESS, at(0));
        peer.answered(0, at(100)); // a server without the liveness service
        peer.answered(OLD_PROCESS, at(200));
        assertEquals(List.of(), told);
    }

    @Test
    void anEndpointNotWatchedIsReportedOnEveryBreakAsBefore() {
        String unwatched = "10.0.0.8:7001";
        listeners.fireLost(unwatched, "inbound connection closed");
        listeners.fireLost(unwatched, "inbound connection closed");
        assertEquals(List.of("lost " + unwatched, "lost " + unwatched), told,
                "nothing would ever restore it, so a later break must not be swallowed");
    }

    @Test
    void nothingIsReportedOnceSilenced() {
        peer.answered(OLD_PROCESS, at(0));
        listeners.silence();
        peer.checkSilence(at(SILENCE_MS));
        peer.answered(NEW_PROCESS, at(SILENCE_MS + 1));
        listeners.fireLost(PEER, "outbound channel failed");
        assertEquals(List.of(), told);
    }

    @Test
    void onePingAtATime() {
        assertTrue(peer.startPing());
        assertFalse(peer.startPing(), "a ping is under way");
        peer.pingEnded();
        assertTrue(peer.startPing());
    }
}
