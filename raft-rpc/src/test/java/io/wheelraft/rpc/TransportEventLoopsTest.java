package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.wheelraft.rpc.Requests.GROUP;
import static io.wheelraft.rpc.Requests.append;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RpcOptions#ioThreads()}: which threads carry a transport's traffic, and that its own loops end with it. */
class TransportEventLoopsTest {

    /** Records the thread each AppendEntries was handled on, and answers once {@link #release} completes. */
    private static final class ThreadRecordingHandler extends FakeHandler {
        final CompletableFuture<Void> release = new CompletableFuture<>();
        volatile String handledOn;
        volatile boolean loopKnown;

        @Override
        public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
            handledOn = Thread.currentThread().getName();
            loopKnown = TransportEventLoops.currentLoop() != null;
            return release.thenCompose(v -> super.handleAppendEntries(request));
        }
    }

    /**
     * The thread an answer to {@code from}'s AppendEntries completes on, and the thread the
     * follower handled it on; fails if the handling thread did not know its own event loop.
     */
    private static String[] exchange(GrpcRaftTransport from, GrpcRaftTransport to) throws Exception {
        ThreadRecordingHandler handler = new ThreadRecordingHandler();
        PeerId fromId = Requests.peerAt(from);
        PeerId toId = Requests.peerAt(to);
        to.register(GROUP, toId, handler);
        // The answer is held back until the callback is attached, so it runs where the answer arrives.
        CompletableFuture<String> answeredOn = from.appendEntries(toId, append(fromId, toId, 1, 1, 16), 5000)
                .thenApply(r -> Thread.currentThread().getName());
        handler.release.complete(null);
        String[] threads = {answeredOn.get(5, TimeUnit.SECONDS), handler.handledOn};
        assertTrue(handler.loopKnown, "the handling thread " + threads[1] + " did not know its event loop");
        return threads;
    }

    @Test
    void ownLoopsCarryBothTheServerAndTheChannelsAndEndWithTheTransport() throws Exception {
        RpcOptions oneLoop = RpcOptions.builder().ioThreads(1).build();
        GrpcRaftTransport a = GrpcRaftTransport.builder().listen("127.0.0.1", 0).options(oneLoop).start();
        GrpcRaftTransport b = GrpcRaftTransport.builder().listen("127.0.0.1", 0).options(oneLoop).start();
        try {
            String[] threads = exchange(a, b);
            assertTrue(threads[0].startsWith("wheelraft-io-"), "answer completed on " + threads[0]);
            assertTrue(threads[1].startsWith("wheelraft-io-"), "request handled on " + threads[1]);
        } finally {
            a.close();
            b.close();
        }
        awaitNoThreadsNamed("wheelraft-io-");
    }

    @Test
    void byDefaultTrafficRunsOnTheProcessSharedLoopsWhichEndWithTheLastTransport() throws Exception {
        GrpcRaftTransport a = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        GrpcRaftTransport b = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        GrpcRaftTransport c = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        try {
            String[] threads = exchange(a, b);
            assertTrue(threads[0].startsWith("wheelraft-shared-io-"), "answer completed on " + threads[0]);
            assertTrue(threads[1].startsWith("wheelraft-shared-io-"), "request handled on " + threads[1]);
            a.close();
            // a let go of the shared loops; b and c still use them
            threads = exchange(b, c);
            assertTrue(threads[1].startsWith("wheelraft-shared-io-"), "request handled on " + threads[1]);
        } finally {
            a.close();
            b.close();
            c.close();
        }
        awaitNoThreadsNamed("wheelraft-shared-io-");
    }

    @Test
    void aNegativeThreadCountIsRefusedNamingTheOption() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RpcOptions.builder().ioThreads(-1));
        assertTrue(e.getMessage().contains("ioThreads") && e.getMessage().contains("-1"), e.getMessage());
    }

    private static void awaitNoThreadsNamed(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            }
        }
        assertEquals(0, liveThreads(prefix), "event-loop threads " + prefix + "* outlived their transports");
    }

    private static long liveThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }
}
