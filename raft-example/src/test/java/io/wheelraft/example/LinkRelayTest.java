package io.wheelraft.example;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LinkRelay} on real loopback sockets: bytes arrive in order, none before its chunk's
 * delay, ends of streams are passed on, and what was relayed is counted. The bounds are lower
 * bounds only (a delay is a minimum; a busy machine may add to it).
 */
class LinkRelayTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final long MS = 1_000_000L;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    /** Counts its draws, so a test can send the next message only once the relay has read the previous one as its own chunk. */
    private static final class CountingDraw implements LinkRelay.DelayDraw {
        final AtomicInteger draws = new AtomicInteger();
        private final LinkRelay.DelayDraw inner;

        CountingDraw(LinkRelay.DelayDraw inner) {
            this.inner = inner;
        }

        @Override
        public long nextNanos() {
            long d = inner.nextNanos();
            draws.incrementAndGet();
            return d;
        }
    }

    @Test
    void aLaterChunkWithAShorterDelayNeverOvertakesAnEarlierOne() throws Exception {
        // The first chunk is held 150 ms, every later one 0 ms: without the ordering rule they would all overtake it.
        AtomicInteger calls = new AtomicInteger();
        CountingDraw draw = new CountingDraw(() -> calls.getAndIncrement() == 0 ? 150 * MS : 0);
        Link link = link(draw);
        long[] sent = sendMessages(link, draw, 10);
        long[] arrived = receiveMessages(link, 10);
        for (int k = 0; k < 10; k++) {
            assertTrue(arrived[k] - sent[0] >= 150 * MS, "message " + k + " arrived " + (arrived[k] - sent[0]) / 1e6
                    + " ms after the first was sent, before the first chunk's 150 ms were up");
        }
    }

    @Test
    void everyChunkArrivesInOrderAndNoEarlierThanTheShortestDelay() throws Exception {
        CountingDraw draw = new CountingDraw(LinkRelay.uniformMillis(10, 30));
        Link link = link(draw);
        int n = 30;
        long[] sent = sendMessages(link, draw, n);
        long[] arrived = receiveMessages(link, n);
        for (int k = 0; k < n; k++) {
            assertTrue(arrived[k] - sent[k] >= 10 * MS, "message " + k + " arrived " + (arrived[k] - sent[k]) / 1e6
                    + " ms after it was sent, under the 10 ms minimum");
        }
        // The relay counts a chunk once its write returned, which may be just after the target read it.
        await(() -> link.relay.totals().bytes() == n * 8L);
        LinkRelay.Totals t = link.relay.totals();
        assertEquals(1, t.connections());
        assertTrue(t.minHoldMs() >= 10, "shortest hold " + t.minHoldMs() + " ms");
    }

    @Test
    void bytesTravelBothWaysDelayed() throws Exception {
        Link link = link(LinkRelay.uniformMillis(20, 20));
        long t0 = System.nanoTime();
        link.client.getOutputStream().write(new byte[] {1, 2, 3});
        byte[] in = link.target.getInputStream().readNBytes(3);
        link.target.getOutputStream().write(in);
        byte[] back = link.client.getInputStream().readNBytes(3);
        long rtt = System.nanoTime() - t0;
        assertEquals(List.of((byte) 1, (byte) 2, (byte) 3), List.of(back[0], back[1], back[2]));
        assertTrue(rtt >= 40 * MS, "round trip " + rtt / 1e6 + " ms, under twice the 20 ms delay");
    }

    @Test
    void anOrderlyCloseArrivesAfterTheDataBeforeIt() throws Exception {
        Link link = link(LinkRelay.uniformMillis(5, 15));
        OutputStream out = link.client.getOutputStream();
        out.write("last words".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        link.client.close();
        InputStream in = link.target.getInputStream();
        assertEquals("last words", new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII));
    }

    @Test
    void aResetIsPassedOnAsAReset() throws Exception {
        Link link = link(LinkRelay.uniformMillis(5, 5));
        link.target.setSoLinger(true, 0);
        link.target.close();
        InputStream in = link.client.getInputStream();
        assertThrows(IOException.class, () -> {
            // A reset is an exception on read; an orderly end would be -1, which this loop refuses.
            while (in.read() != -1) {
                continue;
            }
            throw new AssertionError("the relay closed in order instead of passing the reset on");
        });
    }

    @Test
    void aTargetThatRefusesIsPassedOnAsAReset() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
            closedPort = s.getLocalPort();
        }
        LinkRelay relay = new LinkRelay(LOOPBACK, LinkRelay.uniformMillis(0, 0));
        toClose.add(relay);
        int port = relay.forward(new InetSocketAddress(LOOPBACK, closedPort), "refused");
        Socket client = new Socket(LOOPBACK, port);
        toClose.add(client);
        InputStream in = client.getInputStream();
        assertThrows(IOException.class, () -> {
            while (in.read() != -1) {
                continue;
            }
            throw new AssertionError("the relay closed in order instead of resetting");
        });
        await(() -> relay.totals().failedConnects() == 1);
        assertEquals(0, relay.totals().connections());
    }

    @Test
    void uniformDelaysStayWithinTheirRange() {
        LinkRelay.DelayDraw d = LinkRelay.uniformMillis(10, 30);
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 10_000; i++) {
            long v = d.nextNanos();
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        assertTrue(min >= 10 * MS && max <= 30 * MS, "drawn from " + min + " to " + max + " ns");
        assertThrows(IllegalArgumentException.class, () -> LinkRelay.uniformMillis(-1, 5));
        assertThrows(IllegalArgumentException.class, () -> LinkRelay.uniformMillis(10, 5));
    }

    /** A client connected through the relay to an accepted socket of a loopback target. */
    private record Link(LinkRelay relay, Socket client, Socket target) {
    }

    private Link link(LinkRelay.DelayDraw draw) throws Exception {
        ServerSocket listener = new ServerSocket(0, 4, LOOPBACK);
        toClose.add(listener);
        LinkRelay relay = new LinkRelay(LOOPBACK, draw);
        toClose.add(relay);
        int port = relay.forward(new InetSocketAddress(LOOPBACK, listener.getLocalPort()), "test");
        Socket client = new Socket(LOOPBACK, port);
        client.setTcpNoDelay(true);
        toClose.add(client);
        listener.setSoTimeout(10_000);
        Socket target = listener.accept();
        toClose.add(target);
        target.setSoTimeout(10_000);
        client.setSoTimeout(10_000);
        return new Link(relay, client, target);
    }

    /**
     * Sends {@code n} 8-byte messages (each its index), each only once the relay has read the one
     * before as a chunk of its own; returns when each was written.
     */
    private static long[] sendMessages(Link link, CountingDraw draw, int n) throws Exception {
        long[] sent = new long[n];
        OutputStream out = link.client.getOutputStream();
        for (int k = 0; k < n; k++) {
            int before = draw.draws.get();
            sent[k] = System.nanoTime();
            out.write(ByteBuffer.allocate(8).putLong(k).array());
            await(() -> draw.draws.get() > before);
        }
        return sent;
    }

    /** Reads {@code n} messages at the target, checks each is the next index, returns when each arrived. */
    private static long[] receiveMessages(Link link, int n) throws IOException {
        long[] arrived = new long[n];
        DataInputStream in = new DataInputStream(link.target.getInputStream());
        for (int k = 0; k < n; k++) {
            long index = in.readLong();
            arrived[k] = System.nanoTime();
            assertEquals(k, index, "message out of order");
        }
        return arrived;
    }

    private static void await(BooleanSupplier condition) throws InterruptedException, TimeoutException {
        LocalCluster.await("the relay's counters", 10_000, condition);
    }
}
