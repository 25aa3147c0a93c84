package io.wheelraft.client;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.LeaderReply;
import io.wheelraft.client.proto.LeaderRequest;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * A {@code Leader} call with a wait ({@link LeaderRequest#getWaitMs()}), answered when this member
 * learns of a leader the caller can use, or with what it knows when the wait ends. While an
 * election runs, a client asking every member every few ms sent each of them dozens of calls per
 * group and second, all answered "no leader yet"; after a process kill at thousands of groups
 * those calls competed with the elections for the survivors' CPU. Held, it is one call per member
 * per election, answered the moment the member hears of the winner.
 *
 * <p>It waits through {@link Node#leaderChange}: no thread and no poll of its own. A call the
 * client cancels (its deadline) stops waiting. Answered exactly once, from the node's Raft lane
 * (a change), the JDK's delay thread (the wait ended) or the gRPC thread (known at once).
 */
final class HeldLeaderAnswer {

    /** The longest a member holds an answer, whatever the caller asks. */
    static final long MAX_WAIT_MS = 5_000;

    private final Node node;
    private final Set<String> notLeaders;
    private final StreamObserver<LeaderReply> out;
    private final Function<NodeStatus, LeaderReply> reply;
    private final long deadlineNanos;
    private final AtomicBoolean answered = new AtomicBoolean();
    private volatile boolean cancelled;
    private volatile CompletableFuture<Void> waiting;

    HeldLeaderAnswer(Node node, LeaderRequest request, StreamObserver<LeaderReply> out, Function<NodeStatus, LeaderReply> reply) {
        this.node = node;
        this.notLeaders = Set.copyOf(request.getNotLeadersList());
        this.out = out;
        this.reply = reply;
        this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(request.getWaitMs(), MAX_WAIT_MS));
    }

    /** Answers now if a usable leader is known, else waits; call once, on the gRPC thread that received the call. */
    void start() {
        if (out instanceof ServerCallStreamObserver<LeaderReply> call) {
            call.setOnCancelHandler(() -> {
                cancelled = true;
                CompletableFuture<Void> w = waiting;
                if (w != null) {
                    w.cancel(false);
                }
            });
        }
        check();
    }

    private void check() {
        if (answered.get() || cancelled) {
            return;
        }
        NodeStatus s = node.status();
        long left = deadlineNanos - System.nanoTime();
        if (usable(s) || left <= 0) {
            answer(s);
            return;
        }
        CompletableFuture<Void> w = node.leaderChange(s.term(), s.leader());
        waiting = w;
        // A change that names no usable leader (a new term, no winner yet) waits again for the rest.
        w.completeOnTimeout(null, left, TimeUnit.NANOSECONDS).thenRun(this::check);
        if (cancelled) {
            w.cancel(false); // cancelled between the check above and publishing the wait
        }
    }

    /** A leader is known and the caller is not moving away from it. */
    private boolean usable(NodeStatus s) {
        return s.leader() != null && !notLeaders.contains(s.leader().endpoint());
    }

    private void answer(NodeStatus s) {
        if (answered.compareAndSet(false, true)) {
            out.onNext(reply.apply(s));
            out.onCompleted();
        }
    }
}
