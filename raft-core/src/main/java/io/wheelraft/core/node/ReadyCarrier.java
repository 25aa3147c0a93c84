package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.AppendEntriesResponse;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Carries out one {@link Ready} batch of the core, in the one order that keeps Raft's promises
 * (see {@link #carryOut(Ready, Answer, boolean)}), through a {@link Sink} that does
 * the actual I/O. It also holds a follower's acknowledgements of entries until the log is durable
 * through what they acknowledge. Raft lane only; not thread-safe.
 *
 * <p>When the meta storage {@linkplain Sink#writesHardStateLater() writes later} (many groups'
 * term and vote changes synced together), a batch with a new term or vote does not hold the
 * thread for the sync: the carrier starts the write, {@linkplain SerialLane#pauseAfterCurrentTask()
 * pauses} the node's lane, and carries out the rest of the batch as the lane's next task once the
 * write is durable. Nothing of the node runs in between, so the order below holds exactly as if
 * the write had been synchronous. A step that follows in the same task (one not ending with its
 * batch) first waits for the write and finishes the paused batch in place.
 */
final class ReadyCarrier {

    /** What carrying a batch out does to the world; the node shell implements it. */
    interface Sink {
        /** Writes term and vote durably before returning; throws (a StorageException) if it could not. */
        void persistHardState(long term, PeerId votedFor);

        /**
         * Whether {@link #persistHardStateLater} may be used: the write is durable only when its
         * callback runs, and the thread is free meanwhile. False: only {@link #persistHardState}.
         */
        default boolean writesHardStateLater() {
            return false;
        }

        /**
         * Starts the durable write of term and vote; {@code done} runs once, on any thread, with
         * null once it is durable or with the failure. Followed by {@link #hardStateDurable} on
         * the lane when it succeeded.
         */
        default void persistHardStateLater(long term, PeerId votedFor, Consumer<RuntimeException> done) {
            throw new UnsupportedOperationException("this sink writes term and vote synchronously only");
        }

        /** Bookkeeping once a write started with {@link #persistHardStateLater} is durable (Raft lane). */
        default void hardStateDurable(long term, PeerId votedFor) {
        }

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

        /** Puts the node in line for one of its process's campaign slots ({@code RaftCore.onCampaignSlotGranted} when granted). */
        void awaitCampaignSlot();

        /** Asks for {@code RaftCore.onWake} at clock time {@code atMs} (at once if it has passed). */
        void scheduleWake(long atMs);
    }

    /** The answer to the request a step handled: sent in its place in the batch, or failed if the batch cannot go. */
    private record Answer(Runnable send, Consumer<RuntimeException> fail) {
    }

    private final Sink sink;
    /** The node's Raft lane, paused while a term and vote write is under way; null: never pause. */
    private final SerialLane lane;
    /** True once the node was halted from outside its lane (a simulated crash): a paused batch is dropped. */
    private final BooleanSupplier halted;
    /** Follower acknowledgements waiting for the log to be durable through what they acknowledge. */
    private final PendingResponses heldAcks = new PendingResponses();
    private boolean carrying;
    /** The batch waiting for its term and vote to be durable (the lane is paused), or null. */
    private Paused paused;

    /** A carrier that writes term and vote synchronously. */
    ReadyCarrier(Sink sink) {
        this(sink, null, () -> false);
    }

    /**
     * A carrier that pauses {@code lane} instead of waiting when the sink writes term and vote
     * later; a batch still paused when {@code halted} turns true is dropped whole.
     */
    ReadyCarrier(Sink sink, SerialLane lane, BooleanSupplier halted) {
        this.sink = sink;
        this.lane = lane;
        this.halted = halted;
    }

    /**
     * Carries out a batch that answers no request. If it must wait for a term and vote write, the
     * rest of it runs after the current task: call it last in a task, or use {@link #carryOutNow}
     * when the task does something afterwards that needs the batch done.
     */
    void carryOut(Ready batch) {
        carryOut(batch, null, true);
    }

    /** Carries out a batch completely before returning (term and vote written synchronously if need be). */
    void carryOutNow(Ready batch) {
        carryOut(batch, null, false);
    }

    /** Carries out {@code batch}, then sends {@code answer} to the request the step handled. */
    <T> void carryOutAnswering(Ready batch, T answer, CompletableFuture<T> to) {
        carryOut(batch, new Answer(() -> to.complete(answer), to::completeExceptionally), true);
    }

    /** Carries out {@code batch}, then sends (or holds until durable) a follower's answer to AppendEntries. */
    void carryOutAcknowledging(Ready batch, RaftCore.AppendResult ack, CompletableFuture<AppendEntriesResponse> to) {
        carryOut(batch, new Answer(() -> heldAcks.respond(ack.requiredPersistedIndex(), batch.durableIndex(), ack.response(), to),
                to::completeExceptionally), true);
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
    private void carryOut(Ready batch, Answer answer, boolean mayPause) {
        if (paused != null) {
            // A step after one whose term and vote write is under way, in the same task: the
            // paused batch must be done before this one, so wait for the write here.
            paused.awaitAndFinish();
        }
        if (carrying) {
            // A sink action stepped the core synchronously: the shared batch would be mixed up.
            throw new IllegalStateException("a Ready batch is being carried out; the core was stepped from inside it");
        }
        carrying = true;
        boolean pausing = false;
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
                if (mayPause && lane != null && sink.writesHardStateLater()) {
                    Paused p = new Paused(batch, answer, sentEarly, hard);
                    paused = p;
                    pausing = true;
                    lane.pauseAfterCurrentTask();
                    sink.persistHardStateLater(hard.term(), hard.votedFor(), p::written);
                    return;
                }
                sink.persistHardState(hard.term(), hard.votedFor());
            }
            carryOutAfterHardState(batch, answer, sentEarly);
        } finally {
            if (!pausing) {
                batch.clear();
                carrying = false;
            }
        }
    }

    /** Steps 2 (the repairing flag) to 7 of {@link #carryOut(Ready, Answer, boolean)}. */
    private void carryOutAfterHardState(Ready batch, Answer answer, boolean sentEarly) {
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
            answer.send().run();
        }
        if (batch.durableReported()) {
            heldAcks.release(batch.durableIndex());
        }
        if (batch.electionRetry()) {
            sink.scheduleElectionRetry();
        }
        if (batch.awaitCampaignSlot()) {
            sink.awaitCampaignSlot();
        }
        if (batch.wakeAtMs() >= 0) {
            sink.scheduleWake(batch.wakeAtMs());
        }
    }

    /**
     * A batch whose term and vote are being written while the lane is paused. The write's
     * callback resumes the lane with {@link #finish}; a step later in the same task finishes it in
     * place instead ({@link #awaitAndFinish}), and the resumed call then finds nothing to do.
     */
    private final class Paused {
        private final Ready batch;
        private final Answer answer;
        private final boolean sentEarly;
        private final Ready.HardState hard;
        private final CountDownLatch written = new CountDownLatch(1);
        private volatile RuntimeException error;
        /** Lane only. */
        private boolean finished;

        Paused(Ready batch, Answer answer, boolean sentEarly, Ready.HardState hard) {
            this.batch = batch;
            this.answer = answer;
            this.sentEarly = sentEarly;
            this.hard = hard;
        }

        /** The write's callback, on any thread. */
        void written(RuntimeException failure) {
            error = failure;
            lane.resumeWith(this::finish);
            written.countDown(); // after the resume, so a waiting step never races it
        }

        void awaitAndFinish() {
            boolean interrupted = false;
            while (true) {
                try {
                    written.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            finish();
        }

        /**
         * On the lane: the rest of the batch, or, if the write failed, nothing of it (the
         * answer fails, and the failure goes to the lane, which stops the node).
         */
        void finish() {
            if (finished) {
                return;
            }
            finished = true;
            paused = null;
            try {
                RuntimeException failure = error;
                if (failure == null && halted.getAsBoolean()) {
                    failure = new TransportException(TransportException.Kind.CLOSED, "the node stopped");
                    if (answer != null) {
                        answer.fail().accept(failure);
                    }
                    return; // a halted node sends nothing more, as if its process had died
                }
                if (failure != null) {
                    if (answer != null) {
                        answer.fail().accept(failure);
                    }
                    throw failure;
                }
                sink.hardStateDurable(hard.term(), hard.votedFor());
                carryOutAfterHardState(batch, answer, sentEarly);
            } finally {
                batch.clear();
                carrying = false;
            }
        }
    }

    /** The node stopped: every held acknowledgement fails with {@code reason}. */
    void failHeld(TransportException reason) {
        heldAcks.failAll(reason);
    }
}
