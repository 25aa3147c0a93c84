package io.wheelraft.rpc;

import io.grpc.netty.shaded.io.netty.channel.ConnectTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After a break, one connection attempt tells a gone process (refused) from one that is still
 * there (connected): only the first is reported, once, and only for the latest break.
 */
class PeerGoneProbeTest {

    private final ConnectionListeners listeners = new ConnectionListeners();
    private final RecordingConnectionListener recorded = new RecordingConnectionListener();
    private final TransportEventLoops loops = TransportEventLoops.create(1);

    PeerGoneProbeTest() {
        listeners.add(recorded);
        listeners.probeBreaksWith(new PeerGoneProbe(loops, listeners, 2_000));
    }

    @AfterEach
    void close() {
        loops.close();
    }

    /** A port nothing listens on: bound once to learn a free one, then closed. */
    private static String closedEndpoint() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    private void awaitEvents(int count) {
        GrpcTestCluster.await(() -> recorded.withGone.size() >= count, 10_000, () -> "only " + recorded.withGone);
    }

    @Test
    void aBreakToAnAddressThatRefusesConnectionsIsReportedGoneOnce() throws Exception {
        String endpoint = closedEndpoint();
        listeners.fireLost(endpoint, "test");
        awaitEvents(2);
        assertEquals(List.of("lost " + endpoint, "gone " + endpoint), recorded.withGone);
        listeners.fireGone(endpoint, 1); // a second refusal of the same break
        assertEquals(2, recorded.withGone.size(), "reported twice: " + recorded.withGone);
    }

    @Test
    void aBreakToAnAddressStillListeningIsNotReportedGone() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String endpoint = "127.0.0.1:" + server.getLocalPort();
            server.setSoTimeout(10_000);
            listeners.fireLost(endpoint, "test");
            try (Socket probe = server.accept()) {
                // The probe's connection was accepted and is held, so it was not refused: nothing more is reported.
                assertTrue(probe.isConnected());
                assertEquals(-1, probe.getInputStream().read(), "the probe sends nothing and closes its connection itself");
                assertEquals(List.of("lost " + endpoint), recorded.withGone);
            }
        }
    }

    @Test
    void aListeningSocketThatDropsTheProbeAndClosesIsTriedAgainAndReportedGone() throws Exception {
        String endpoint;
        try (ServerSocket dying = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            endpoint = "127.0.0.1:" + dying.getLocalPort();
            dying.setSoTimeout(10_000);
            listeners.fireLost(endpoint, "test");
            // A process being torn down: its listening socket still took the probe, then everything closes.
            dying.accept().close();
        }
        awaitEvents(2);
        assertEquals(List.of("lost " + endpoint, "gone " + endpoint), recorded.withGone);
    }

    @Test
    void aRefusalAboutAnEarlierBreakOrAfterTheEndpointCameBackIsIgnored() throws Exception {
        String endpoint = "127.0.0.1:1"; // never probed: the refusals below are reported by hand
        listeners.probeBreaksWith(null);
        listeners.fireLost(endpoint, "first break");
        listeners.fireRestarted(endpoint);
        listeners.fireGone(endpoint, 1);
        assertFalse(recorded.withGone.contains("gone " + endpoint), "restored since: " + recorded.withGone);
        listeners.fireLost(endpoint, "second break");
        listeners.fireGone(endpoint, 1);
        assertFalse(recorded.withGone.contains("gone " + endpoint), "about the first break: " + recorded.withGone);
        listeners.fireGone(endpoint, 2);
        assertTrue(recorded.withGone.contains("gone " + endpoint), recorded.withGone.toString());
    }

    @Test
    void onlyARefusalCounts() {
        assertTrue(PeerGoneProbe.refused(new ConnectException("Connection refused")));
        assertTrue(PeerGoneProbe.refused(new RuntimeException("wrapped", new ConnectException("connect(..) failed: Connection refused"))));
        assertFalse(PeerGoneProbe.refused(new ConnectTimeoutException("connection timed out: /10.0.0.1:7001")));
        assertFalse(PeerGoneProbe.refused(new ConnectException("No route to host")));
        assertFalse(PeerGoneProbe.refused(null));
    }
}
