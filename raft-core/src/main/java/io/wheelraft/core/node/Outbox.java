package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

/**
 * Sends what a {@link Ready} batch says to send, through the transport, and brings each answer
 * back to the node's Raft lane ({@link Answers}). Also runs the snapshot transfers to followers,
 * one per follower. {@link #send} is called on the Raft lane only.
 */
final class Outbox {

    /** Where answers go; every method runs on the Raft lane and steps the core. */
    interface Answers {
        /**
         * An answer to a (pre-)vote request, or {@code response} null if none came;
         * {@code notHosted}: the voter's process answered that it does not host the group (yet).
         */
        void vote(PeerId to, RequestVoteRequest request, RequestVoteResponse response, boolean notHosted);

        /** An answer to AppendEntries, or {@code response} null if none came. */
        void append(PeerId to, AppendEntriesRequest request, AppendEntriesResponse response);

        /** A snapshot transfer ended ({@code ok}) or gave up; {@code higherTerm} is a term the follower reported. */
        void snapshotSent(PeerId peer, long leaderTerm, long snapshotIndex, boolean ok, long higherTerm);
    }

    /** How a snapshot transfer is made (the node's storage, transport, lane and options). */
    interface SenderFactory {
        SnapshotSender create(PeerId to, long leaderTerm, BooleanSupplier stillLeader, SnapshotSender.Outcome done);
    }

    private final PeerId self;
    private final RaftTransport transport;
    /** Runs answer handling on the Raft lane, unless the node stopped. */
    private final Consumer<Runnable> post;
    /** As {@link #post}, but on the calling thread when the lane is idle (the replication path). */
    private final Consumer<Runnable> postHere;
    private final Answers answers;
    private final long rpcTimeoutMs;
    private final LongSupplier voteTimeoutMs;
    private final SenderFactory senderFactory;
    /** Is this node still leader of the given term (a transfer of an older term stops)? */
    private final LongPredicate leaderOf;
    /** Runs the vote path once ahead of the first failover. */
    private final VotePathWarmup warmup;
    /** The membership connections were last prepared for; Raft lane only. */
    private Membership prepared;
    /** Snapshot transfers to followers in progress, by peer; Raft lane only. */
    private final Map<PeerId, SnapshotSender> senders = new HashMap<>();

    /**
     * @param voteTimeoutMs a peer silent this long is treated as refusing, so a round with a hung
     *                      peer ends before the vote timer (asked per request: it grows while rounds fail)
     */
    Outbox(PeerId self, RaftTransport transport, Consumer<Runnable> post, Consumer<Runnable> postHere, Answers answers,
           long rpcTimeoutMs, LongSupplier voteTimeoutMs, SenderFactory senderFactory, LongPredicate leaderOf,
           VotePathWarmup warmup) {
        this.warmup = warmup;
        this.self = self;
        this.transport = transport;
        this.post = post;
        this.postHere = postHere;
        this.answers = answers;
        this.rpcTimeoutMs = rpcTimeoutMs;
        this.voteTimeoutMs = voteTimeoutMs;
        this.senderFactory = senderFactory;
        this.leaderOf = leaderOf;
    }

    void send(Ready.Message message) {
        if (message instanceof Ready.VoteRequest v) {
            // Not postHere: winning a round writes the new term and vote synchronously, and that
            // fsync must not run on (and stall) the gRPC I/O thread that delivered the answer.
            // handle, not whenComplete: the latter fails its own (unused) future with a new
            // CompletionException, stack trace and all, for every failed send.
            transport.requestVote(v.to(), v.request(), voteTimeoutMs.getAsLong())
                    .handle((resp, err) -> {
                        post.accept(() -> answers.vote(v.to(), v.request(), resp, notHosted(err)));
                        return null;
                    });
        } else if (message instanceof Ready.AppendRequest a) {
            transport.appendEntries(a.to(), a.request(), rpcTimeoutMs)
                    .handle((resp, err) -> {
                        postHere.accept(() -> answers.append(a.to(), a.request(), resp));
                        return null;
                    });
        } else if (message instanceof Ready.TimeoutNow n) {
            transport.timeoutNow(n.to(), n.request(), rpcTimeoutMs);
        } else if (message instanceof Ready.SnapshotTransfer s) {
            startSnapshot(s.to(), s.term());
        }
    }

    /** Did the peer's process answer that it has no member of the group (TransportException NOT_FOUND)? */
    static boolean notHosted(Throwable err) {
        Throwable t = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        return t instanceof TransportException te && te.kind() == TransportException.Kind.NOT_FOUND;
    }

    /**
     * A voter keeps connections open to the other voters: it may have to ask them for votes, and
     * a failover should not wait for a connection to open (a restarted node has dialled no one),
     * nor for the vote path's code to load ({@link VotePathWarmup}).
     */
    void prepareConnections(Membership membership) {
        prepared = membership;
        if (!membership.isVoter(self)) {
            return;
        }
        for (PeerId p : membership.voters()) {
            if (!p.equals(self)) {
                transport.prepareConnection(p);
            }
        }
        warmup.warm(membership);
    }

    /** Runs the vote path to the voters not reached yet (they were down when last tried); Raft lane only. */
    void warmVotePath() {
        Membership m = prepared;
        if (m != null) {
            warmup.warm(m);
        }
    }

    private void startSnapshot(PeerId to, long leaderTerm) {
        SnapshotSender running = senders.get(to);
        if (running != null && running.term() == leaderTerm) {
            return; // one transfer per follower; it reports when it ends
        }
        SnapshotSender[] holder = new SnapshotSender[1];
        SnapshotSender sender = senderFactory.create(to, leaderTerm, () -> leaderOf.test(leaderTerm),
                (peer, index, ok, higherTerm) -> post.accept(() -> {
                    senders.remove(peer, holder[0]);
                    answers.snapshotSent(peer, leaderTerm, index, ok, higherTerm);
                }));
        holder[0] = sender;
        senders.put(to, sender);
        sender.start();
    }
}
