package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesResponse;

import java.util.concurrent.CompletableFuture;

/**
 * Carries out one {@link Ready} batch of the core, in the one order that keeps Raft's promises
 * (see {@link #carryOut(Ready, Runnable)}), through a {@link Sink} that does
 * the actual I/O. It also holds a follower's acknowledgements of entries until the log is durable
 * through what they acknowledge. Raft lane only; not thread-safe.
 */
final class ReadyCarrier {

    /** What carrying a batch out does to the world; the node shell implements it. */
    interface Sink {
        /** Writes term and vote durably before returning; throws (a StorageException) if it could not. */
        void persistHardState(long term, PeerId votedFor);

        /** Writes the "fenced after a storage fault" flag durably before returning; throws if it could not. */
        void persistRepairing(boolean repairing);

        /** Bookkeeping for one event (role, commit, membership, discarded entries, a finished caller). */
        void handle(Ready.Event event);

        /** Queues one log write; its completion is reported to the core later. */
        void writeLog(Ready.LogWrite write);

        /** Sends one message (or starts one snapshot transfer) now. */
        void send(Ready.Message message);

        /** Asks for {@code RaftCore.onElectionRetry} after a short random pause. */
        void scheduleElectionRetry();

        /** Asks for {@code RaftCore.onWake} at clock time {@code atMs} (at once if it has passed). */
        void scheduleWake(long atMs);
    }

    private final Sink sink;
    /** Follower acknowledgements waiting for the log to be durable through what they acknowledge. */
    private final PendingResponses heldAcks = new PendingResponses();
    private boolean carrying;

    ReadyCarrier(Sink sink) {
        this.sink = sink;
    }

    /** Carries out a batch that answers no request. */
    void carryOut(Ready batch) {
        carryOut(batch, null);
    }

    /** Carries out {@code batch}, then sends {@code answer} to the request the step handled. */
    <T> void carryOutAnswering(Ready batch, T answer, CompletableFuture<T> to) {
        carryOut(batch, () -> to.complete(answer));
    }

    /** Carries out {@code batch}, then sends (or holds until durable) a follower's answer to AppendEntries. */
    void carryOutAcknowledging(Ready batch, RaftCore.AppendResult ack, CompletableFuture<AppendEntriesResponse> to) {
        carryOut(batch, () -> heldAcks.respond(ack.requiredPersistedIndex(), batch.durableIndex(), ack.response(), to));
    }

    /**
     * Carries out {@code batch} in the order {@link Ready} requires, answering the request the step
     * handled (if any) with {@code answer}:
     * <ol>
     *   <li>a candidate's own vote requests of the term it enters leave
     *       ({@link Ready#mayLeaveBeforeHardState}), so that they travel while its term and
     *       self-vote are written; answers come back through the lane, so they are counted only
     *       after the write below returned;</li>
     *   <li>term, vote and the repairing flag are written durably, synchronously; if that throws,
     *       nothing else of the batch happens (no other message, answer or log write) and the
     *       exception goes to the caller, which stops the node for good;</li>
     *   <li>events, in the order the core decided them (discarded entries also drop the held
     *       acknowledgements of them);</li>
     *   <li>log writes are queued, in order;</li>
     *   <li>messages leave;</li>
     *   <li>the answer leaves, or waits if it acknowledges entries not yet durable; when the step
     *       reported the durable point, held acknowledgements it covers are released, in order;</li>
     *   <li>an election retry is scheduled if a round was lost, and the wake-up the core asked for.</li>
     * </ol>
     * The batch is cleared afterwards, also when a step fails.
     */
    private void carryOut(Ready batch, Runnable answer) {
        if (carrying) {
            // A sink action stepped the core synchronously: the shared batch would be mixed up.
            throw new IllegalStateException("a Ready batch is being carried out; the core was stepped from inside it");
        }
        carrying = true;
        try {
            Ready.HardState hard = batch.hardState();
            boolean sentEarly = false;
            if (hard != null) {
                for (Ready.Message m : batch.messages()) {
                    if (batch.mayLeaveBeforeHardState(m)) {
                        sink.send(m);
                        sentEarly = true;
                    }
                }
                sink.persistHardState(hard.term(), hard.votedFor());
            }
            if (batch.repairing() != null) {
                sink.persistRepairing(batch.repairing());
            }
            for (Ready.Event e : batch.events()) {
                if (e instanceof Ready.EntriesDiscarded d) {
                    heldAcks.discardFrom(d.fromIndex(), new TransportException(TransportException.Kind.REJECTED,
                            "entries from " + d.fromIndex() + " were replaced"));
                }
                sink.handle(e);
            }
            for (Ready.LogWrite w : batch.logWrites()) {
                sink.writeLog(w);
            }
            for (Ready.Message m : batch.messages()) {
                if (!sentEarly || !batch.mayLeaveBeforeHardState(m)) {
                    sink.send(m);
                }
            }
            if (answer != null) {
                answer.run();
            }
            if (batch.durableReported()) {
                heldAcks.release(batch.durableIndex());
            }
            if (batch.electionRetry()) {
                sink.scheduleElectionRetry();
            }
            if (batch.wakeAtMs() >= 0) {
                sink.scheduleWake(batch.wakeAtMs());
            }
        } finally {
            batch.clear();
            carrying = false;
        }
    }

    /** The node stopped: every held acknowledgement fails with {@code reason}. */
    void failHeld(TransportException reason) {
        heldAcks.failAll(reason);
    }
}
