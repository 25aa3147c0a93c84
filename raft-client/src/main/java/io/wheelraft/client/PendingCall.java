package io.wheelraft.client;

import com.google.protobuf.ByteString;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One call of a {@link RaftClient} from its start to its answer, across all its attempts. Each
 * attempt gets a fresh call id, so a late answer to an abandoned attempt is recognised and
 * ignored. Fields are touched by the gRPC threads and the client's timer thread; the volatile ones
 * are read without a lock, and {@link #finished} decides once who completes the future.
 */
final class PendingCall {

    /** The client (and so the group) the call belongs to. */
    final RaftClient owner;
    final boolean command;
    /** Commands: this client's sequence number (the same in every attempt). */
    final long sequence;
    final ByteString payload;
    final ReadMode mode;
    final long minIndex;
    final long deadlineNanos;
    final CompletableFuture<Reply> future = new CompletableFuture<>();
    final AtomicBoolean finished = new AtomicBoolean();

    volatile long callId;
    volatile ServerConnection target;
    /** The stream the current attempt went out on (null while queued), and when. */
    volatile Object sentOn;
    volatile long sentNanos;
    /** When the current attempt was queued for its server. */
    volatile long queuedNanos;
    /** The current attempt has left for its server and has not been answered. */
    volatile boolean attemptSent;
    /** Some earlier attempt reached a server and ended without a definite answer: it may have been applied. */
    volatile boolean mayHaveApplied;
    volatile boolean sawBusy;
    volatile String lastReason = "no attempt was made";
    /** Consecutive attempts without success: drives the backoff. */
    volatile int failures;
    volatile int redirects;
    /** Some member answered some attempt (else the cluster was unreachable). */
    volatile boolean reachedAny;
    final long startNanos = System.nanoTime();

    PendingCall(RaftClient owner, boolean command, long sequence, ByteString payload, ReadMode mode, long minIndex, long deadlineNanos) {
        this.owner = owner;
        this.command = command;
        this.sequence = sequence;
        this.payload = payload;
        this.mode = mode;
        this.minIndex = minIndex;
        this.deadlineNanos = deadlineNanos;
    }

    boolean done() {
        return finished.get();
    }
}
