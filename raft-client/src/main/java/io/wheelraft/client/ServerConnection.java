package io.wheelraft.client;

import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientCalls;
import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.RaftClientServiceGrpc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link RaftClientTransport}'s link to one server: one channel and one bidirectional stream,
 * shared by every call to that server from any thread and any group's {@link RaftClient}. Calls are queued; whichever thread finds the queue
 * unattended sends everything queued in one message (up to {@link #MAX_CALLS_PER_MESSAGE}), so
 * concurrent callers coalesce without a thread of their own; calls queued by the callbacks of one
 * message of answers wait until all its answers are handled ({@link SendGathering#CALLS}). Nothing is written while gRPC says
 * the stream is not ready ({@code isReady}); the stream's {@code onReady} resumes sending, so a
 * server that reads slowly slows its callers down instead of filling memory.
 *
 * <p>Thread-safe: {@link #send} from any thread; replies arrive on gRPC's threads.
 */
final class ServerConnection implements SendGathering.Sender {

    static final int MAX_CALLS_PER_MESSAGE = 1024;

    private record Attempt(PendingCall call, long callId) {
    }

    /** One stream; replaced by a new one after it breaks. */
    final class Stream implements ClientResponseObserver<ClientCalls, ClientReplies> {
        private volatile ClientCallStreamObserver<ClientCalls> requests;
        volatile boolean broken;

        @Override
        public void beforeStart(ClientCallStreamObserver<ClientCalls> requestStream) {
            requests = requestStream;
            requestStream.setOnReadyHandler(ServerConnection.this::drain);
        }

        @Override
        public void onNext(ClientReplies replies) {
            lastHeardNanos = System.nanoTime();
            // Calls that callbacks of these answers queue leave together, once all are handled.
            SendGathering.CALLS.gatherWhile(() -> owner.onReplies(ServerConnection.this, replies));
        }

        @Override
        public void onError(Throwable t) {
            end(io.grpc.Status.fromThrowable(t).getCode() + describe(t));
        }

        @Override
        public void onCompleted() {
            end("the server ended the stream");
        }

        private void end(String why) {
            if (broken) {
                return;
            }
            broken = true;
            channel.resetConnectBackoff();
            owner.onStreamBroken(ServerConnection.this, this, why);
        }

        void cancel(String why) {
            ClientCallStreamObserver<ClientCalls> r = requests;
            if (r != null) {
                r.cancel(why, null);
            }
            end(why);
        }
    }

    final String endpoint;
    private final ManagedChannel channel;
    private final RaftClientServiceGrpc.RaftClientServiceStub stub;
    private final RaftClientTransport owner;
    private final ConcurrentLinkedQueue<Attempt> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    private volatile Stream stream;
    volatile long lastHeardNanos;
    /** Until when the client avoids this server (its stream just broke), by System.nanoTime. */
    volatile long avoidUntilNanos;

    ServerConnection(String endpoint, ManagedChannel channel, RaftClientTransport owner) {
        this.endpoint = endpoint;
        this.channel = channel;
        this.stub = RaftClientServiceGrpc.newStub(channel);
        this.owner = owner;
    }

    ManagedChannel channel() {
        return channel;
    }

    boolean avoided(long now) {
        return now - avoidUntilNanos < 0;
    }

    /** Queues one attempt of {@code call} and sends what is queued if no other thread is doing so. */
    void send(PendingCall call, long callId) {
        queue.add(new Attempt(call, callId));
        if (!SendGathering.CALLS.defer(this)) {
            drain();
        }
    }

    /** Sends what is queued, as far as the stream is ready (the gathering's flush). */
    @Override
    public void flush() {
        drain();
    }

    private void drain() {
        while (true) {
            if (!draining.compareAndSet(false, true)) {
                return; // the thread that holds it sends ours too, or re-checks after letting go
            }
            Stream s;
            try {
                s = currentStream();
                ClientCallStreamObserver<ClientCalls> out = s.requests;
                while (!s.broken && out != null && out.isReady()) {
                    ClientCalls batch = takeBatch(s);
                    if (batch == null) {
                        break;
                    }
                    out.onNext(batch);
                }
            } catch (RuntimeException e) {
                Stream broken = stream;
                if (broken != null) {
                    broken.cancel("sending failed: " + e);
                }
                return;
            } finally {
                draining.set(false);
            }
            // Re-check after letting go: a call queued (or onReady fired) while we held the flag.
            ClientCallStreamObserver<ClientCalls> out = s.requests;
            if (queue.isEmpty() || s.broken || out == null || !out.isReady()) {
                return;
            }
        }
    }

    private ClientCalls takeBatch(Stream s) {
        ClientCalls.Builder b = null;
        int n = 0;
        long now = System.nanoTime();
        Attempt a;
        while (n < MAX_CALLS_PER_MESSAGE && (a = queue.poll()) != null) {
            PendingCall call = a.call();
            if (call.done() || call.callId != a.callId()) {
                continue; // answered or moved elsewhere meanwhile
            }
            ClientCall proto = call.owner.toProto(call, a.callId());
            call.sentOn = s;
            call.sentNanos = now;
            call.attemptSent = true;
            if (b == null) {
                b = ClientCalls.newBuilder();
            }
            b.addCalls(proto);
            n++;
        }
        return b == null ? null : b.build();
    }

    private Stream currentStream() {
        Stream s = stream;
        if (s == null || s.broken) {
            s = new Stream();
            stream = s;
            stub.calls(s);
        }
        return s;
    }

    /** Takes back every attempt still queued here (the stream broke before they left). */
    List<PendingCall> takeQueued() {
        List<PendingCall> calls = new ArrayList<>();
        Attempt a;
        while ((a = queue.poll()) != null) {
            if (!a.call().done() && a.call().callId == a.callId()) {
                calls.add(a.call());
            }
        }
        return calls;
    }

    /** Drops the current stream (a silent server): later calls open a new one. */
    void abandonStream(String why) {
        Stream s = stream;
        if (s != null) {
            s.cancel(why);
        }
    }

    private static String describe(Throwable t) {
        io.grpc.Status s = io.grpc.Status.fromThrowable(t);
        return s.getDescription() == null ? "" : " " + s.getDescription();
    }
}
