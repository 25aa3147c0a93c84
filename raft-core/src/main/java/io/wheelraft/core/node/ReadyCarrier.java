package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesResponse;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Carries out one {@link Ready} batch of the core, in the one order that keeps Raft's promises
 * (see {@link #carryOut(Ready, Runnable)}), through a {@link Sink} that does
 * the actual I/O. It also holds a follower's acknowledgements of entries until the log is durable
 * through what they acknowledge.
 *
 * <p>A term and vote write that is still on its way when the carrier gets it (a store that syncs
 * many groups' writes together on a thread of its own) does not block the Raft lane: the rest of
 * the batch, and of every batch after it, is kept aside until the write is durable, and the lane
 * is held ({@link LaneHold}) after the current task, so nothing of the node runs meanwhile while
 * the lane's thread serves other nodes. Raft lane only; not thread-safe.
 */
final class ReadyCarrier {

    /** What carrying a batch out does to the world; the node shell implements it. */
    interface Sink {
        /**
         * Writes term and vote durably: the future completes when they are on disk, or fails (with
         * a StorageException) if they could not be written; it may be complete on return.
         */
        CompletableFuture<Void> persistHardState(long term, PeerId votedFor);

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

    /** The Raft lane's {@link SerialLane#holdUntil}: nothing else of the node runs until {@code durable} completes, then {@code then}. */
    interface LaneHold {
        void holdUntil(CompletableFuture<?> durable, Runnable then);
    }

    /** What is left of a batch once its term and vote were handed to the sink; taken out of the (reused) batch. */
    private record Rest(Boolean repairing, List<Ready.Event> events, List<Ready.LogWrite> logWrites, List<Ready.Message> messages,
                        Runnable answer, boolean durableReported, long durableIndex, boolean electionRetry, long wakeAtMs) {

        static Rest of(Ready batch, Runnable answer, boolean skipEarly) {
            List<Ready.Message> messages = new ArrayList<>(batch.messages().size());
            for (Ready.Message m : batch.messages()) {
                if (!skipEarly || !batch.mayLeaveBeforeHardState(m)) {
                    messages.add(m);
                }
            }
            return new Rest(batch.repairing(), List.copyOf(batch.events()), List.copyOf(batch.logWrites()), messages, answer,
                    batch.durableReported(), batch.durableIndex(), batch.electionRetry(), batch.wakeAtMs());
        }
    }

    private final Sink sink;
    private final LaneHold hold;
    /** Follower acknowledgements waiting for the log to be durable through what they acknowledge. */
    private final PendingResponses heldAcks = new PendingResponses();
    private boolean carrying;
    /** Every term and vote write not yet known durable, combined; null when none is. */
    private CompletableFuture<Void> pendingWrite;
    /** What waits for {@link #pendingWrite}, in the order it was decided. */
    private ArrayDeque<Runnable> waiting = new ArrayDeque<>();

    /** A carrier whose sink's term and vote writes are durable on return (tests, the simulation). */
    ReadyCarrier(Sink sink) {
        this(sink, (durable, then) -> {
            throw new IllegalStateException("a term and vote write did not complete on return, and there is no lane to hold");
        });
    }

    ReadyCarrier(Sink sink, LaneHold hold) {
        this.sink = sink;
        this.hold = hold;
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
        long durable = batch.durableIndex();
        carryOut(batch, () -> heldAcks.respond(ack.requiredPersistedIndex(), durable, ack.response(), to));
    }

    /**
     * Runs {@code output} (an answer the lane's task gives outside a batch) at once, or, while a
     * term and vote write is on its way, after it and after everything decided before it.
     */
    void afterDurable(Runnable output) {
        if (pendingWrite == null) {
            output.run();
        } else {
            waiting.add(output);
        }
    }

    /** Whether a term and vote write is on its way and output waits for it (tests and diagnostics). */
    boolean waitingForDurable() {
        return pendingWrite != null;
    }

    /**
     * Carries out {@code batch} in the order {@link Ready} requires, answering the request the step
     * handled (if any) with {@code answer}:
     * <ol>
     *   <li>a candidate's own vote requests of the term it enters leave
     *       ({@link Ready#mayLeaveBeforeHardState}), so that they travel while its term and
     *       self-vote are written; answers come back through the lane, so they are counted only
     *       after the write below is durable;</li>
     *   <li>term and vote are written durably; if the write fails, nothing else of the batch
     *       happens (no other message, answer or log write) and the failure goes to the caller
     *       (or the lane, for a write that completes later), which stops the node for good. A
     *       write still on its way holds everything below, and every later batch, until it is
     *       durable;</li>
     *   <li>the repairing flag is written durably, synchronously;</li>
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
            if (pendingWrite != null) {
                // Behind a write on its way: this batch's own write (if any) is queued after it, the rest waits.
                if (hard != null) {
                    waitFor(sink.persistHardState(hard.term(), hard.votedFor()));
                }
                waiting.add(restOf(Rest.of(batch, answer, false)));
                return;
            }
            boolean sentEarly = false;
            if (hard != null) {
                for (Ready.Message m : batch.messages()) {
                    if (batch.mayLeaveBeforeHardState(m)) {
                        sink.send(m);
                        sentEarly = true;
                    }
                }
                CompletableFuture<Void> write = sink.persistHardState(hard.term(), hard.votedFor());
                if (!write.isDone()) {
                    waitFor(write);
                    waiting.add(restOf(Rest.of(batch, answer, sentEarly)));
                    return;
                }
                durableOrThrow(write);
            }
            carryOutRest(batch.repairing(), batch.events(), batch.logWrites(), batch.messages(), sentEarly ? batch : null, answer,
                    batch.durableReported(), batch.durableIndex(), batch.electionRetry(), batch.wakeAtMs());
        } finally {
            batch.clear();
            carrying = false;
        }
    }

    private void carryOutRest(Boolean repairing, List<Ready.Event> events, List<Ready.LogWrite> logWrites,
                              List<Ready.Message> messages, Ready sentEarlyFrom, Runnable answer, boolean durableReported,
                              long durableIndex, boolean electionRetry, long wakeAtMs) {
        if (repairing != null) {
            sink.persistRepairing(repairing);
        }
        for (Ready.Event e : events) {
            if (e instanceof Ready.EntriesDiscarded d) {
                heldAcks.discardFrom(d.fromIndex(), new TransportException(TransportException.Kind.REJECTED,
                        "entries from " + d.fromIndex() + " were replaced"));
            }
            sink.handle(e);
        }
        for (Ready.LogWrite w : logWrites) {
            sink.writeLog(w);
        }
        for (Ready.Message m : messages) {
            if (sentEarlyFrom == null || !sentEarlyFrom.mayLeaveBeforeHardState(m)) {
                sink.send(m);
            }
        }
        if (answer != null) {
            answer.run();
        }
        if (durableReported) {
            heldAcks.release(durableIndex);
        }
        if (electionRetry) {
            sink.scheduleElectionRetry();
        }
        if (wakeAtMs >= 0) {
            sink.scheduleWake(wakeAtMs);
        }
    }

    /** The rest of a batch, carried out later as one action (not re-entrantly, like a batch now). */
    private Runnable restOf(Rest r) {
        return () -> {
            carrying = true;
            try {
                carryOutRest(r.repairing(), r.events(), r.logWrites(), r.messages(), null, r.answer(), r.durableReported(),
                        r.durableIndex(), r.electionRetry(), r.wakeAtMs());
            } finally {
                carrying = false;
            }
        };
    }

    /** Adds {@code write} to what output waits for, and holds the lane until all of it is durable. */
    private void waitFor(CompletableFuture<Void> write) {
        pendingWrite = pendingWrite == null ? write : pendingWrite.thenCombine(write, (a, b) -> null);
        hold.holdUntil(pendingWrite, this::writesDone);
    }

    /**
     * On the lane, once every pending term and vote write completed: throws if one failed (nothing
     * that waited is carried out; the lane's failure handler stops the node), else carries out what
     * waited, in order. An action that starts a new write puts what is left behind that write too.
     */
    private void writesDone() {
        CompletableFuture<Void> done = pendingWrite;
        if (done == null) {
            return; // the node stopped meanwhile, and dropped what waited
        }
        ArrayDeque<Runnable> work = waiting;
        pendingWrite = null;
        waiting = new ArrayDeque<>();
        durableOrThrow(done);
        while (!work.isEmpty()) {
            if (pendingWrite != null) {
                // Decided before what the new write's batch left waiting: it goes first, behind the new write.
                while (!work.isEmpty()) {
                    waiting.addFirst(work.pollLast());
                }
                return;
            }
            work.poll().run();
        }
    }

    /** Returns if {@code write} succeeded; else throws its failure (a StorageException, as the sink reported it). */
    private static void durableOrThrow(CompletableFuture<Void> write) {
        try {
            write.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new StorageException("term and vote write failed: " + cause, cause);
        }
    }

    /** The node stopped: every held acknowledgement fails with {@code reason}; output waiting for a write is dropped. */
    void failHeld(TransportException reason) {
        pendingWrite = null;
        waiting.clear();
        heldAcks.failAll(reason);
    }
}
