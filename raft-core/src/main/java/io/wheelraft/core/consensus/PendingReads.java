package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The leader's linearizable reads in flight (thesis §6.4): batches waiting for a heartbeat round
 * to be acknowledged by a quorum, and reads that arrived before the leader committed an entry of
 * its own term. Reads are opaque handles to the core; reads held for the term's first commit
 * keep the way their caller chose to confirm them (lease or quorum round). Owned by the Raft lane.
 *
 * <p>Reads do not wake a quiet group, nor keep an awake one from going quiet. A read round on a
 * quiet leader, or on one asking its followers to go quiet, goes out as quiesce heartbeats,
 * which a quiet follower answers and stays quiet on; the transport carries them with the other
 * groups' messages to the same process. A group read often but written rarely then costs one
 * small message per follower and read batch, not heartbeats and timers for an election timeout
 * after every read. Only when a quiet leader's round has no quorum within
 * {@link #quietRoundWaitMs} (a message lost, a follower's process gone) does the leader wake,
 * and its heartbeat rounds, later ones included, confirm the batch as for any read.
 */
final class PendingReads {

    private final RaftCore core;

    PendingReads(RaftCore core) {
        this.core = core;
    }

    /** See {@link RaftCore#readIndex(List, boolean, long)}. */
    void read(List<ReadHandle> handles, boolean lease, long nowMs) {
        if (core.role() != Role.LEADER) {
            core.out().event(new Ready.ReadsFailed(handles, core.leader()));
            return;
        }
        if (lease) {
            // From the next heartbeat round on, answers count toward the lease. This batch may take
            // a round: a lease not asked for lately rests on no heartbeat (see Replication#armLease).
            core.replication().armLease(nowMs);
        }
        if (core.log().term(core.commitIndex()) != core.term()) {
            awaitTermCommit(handles, lease);
            return;
        }
        start(handles, lease, nowMs);
    }

    /** The leader committed its term's first entry: the reads held for it start. */
    void onTermCommitted(long nowMs) {
        for (Waiting w : takeAwaitingTermCommit()) {
            start(w.handles(), w.lease(), nowMs);
        }
    }

    private void start(List<ReadHandle> handles, boolean lease, long nowMs) {
        Membership m = core.membership();
        Replication replication = core.replication();
        long commit = core.commitIndex();
        if (lease && nowMs < replication.leaseBasisMs(m, nowMs) + core.config().leaseMs()) {
            core.out().event(new Ready.ReadsConfirmed(handles, commit));
            return;
        }
        // A quiet leader's lease has run out (it sends no lease rounds): a lease read is
        // confirmed by this quorum round instead, the stronger check.
        Quiescence quiescence = core.quiescence();
        boolean quiet = quiescence.quiet();
        add(handles, commit, replication.readRound(commit, nowMs, quiet || quiescence.asking(), quiescence.notGone));
        if (quiet) {
            armQuietDeadline(nowMs);
        }
        confirm();
    }

    /** A quiet leader's rounds in flight get {@link #quietRoundWaitMs} for a quorum (see {@link #onWakeWhileQuiet}). */
    private void armQuietDeadline(long nowMs) {
        quietRoundDeadlineMs = Math.min(quietRoundDeadlineMs, nowMs + quietRoundWaitMs());
    }

    /**
     * The leader goes quiet now: reads still being confirmed get the quiet rounds' wait from now,
     * as if started quiet (a deadline left from an earlier quiet spell no longer counts).
     */
    void leaderGoesQuiet(long nowMs) {
        quietRoundDeadlineMs = isConfirming() ? nowMs + quietRoundWaitMs() : Long.MAX_VALUE;
    }

    /** How long a quiet leader's read round may go without a quorum before the leader wakes: a quarter election timeout. */
    long quietRoundWaitMs() {
        return Math.max(1, core.config().electionTimeoutMs() / 4);
    }

    /** When the core wants a wake-up for a quiet read round still short of a quorum ({@link Long#MAX_VALUE}: none). */
    long quietRoundDeadlineMs() {
        return core.quiet() && isConfirming() ? quietRoundDeadlineMs : Long.MAX_VALUE;
    }

    /**
     * A wake-up while quiet: a read round that still has no quorum after its wait wakes the
     * leader, whose heartbeats (every round from now on) confirm it or find that it no longer leads.
     */
    void onWakeWhileQuiet(long nowMs) {
        if (core.quiet() && isConfirming() && nowMs >= quietRoundDeadlineMs) {
            quietRoundDeadlineMs = Long.MAX_VALUE;
            core.quiescence().leaderBusy(nowMs);
        }
    }

    /** Releases, in order, every batch whose heartbeat round a quorum of the current membership has acknowledged. */
    void confirm() {
        if (isConfirming()) {
            Membership m = core.membership();
            Replication replication = core.replication();
            confirm(round -> replication.quorumAcked(m, round), core.out());
        }
    }

    private record Batch(List<ReadHandle> handles, long readIndex, long round) {
    }

    private final ArrayDeque<Batch> confirming = new ArrayDeque<>(1); // grows on demand; idle groups keep two slots, not seventeen
    /** The earliest wait of a quiet read round to run out (see {@link #onWakeWhileQuiet}). */
    private long quietRoundDeadlineMs = Long.MAX_VALUE;
    private final List<Waiting> awaitingTermCommit = new ArrayList<>();

    /** Reads held until the term's first commit, with whether they may be confirmed by the lease. */
    record Waiting(List<ReadHandle> handles, boolean lease) {
    }

    private void awaitTermCommit(List<ReadHandle> handles, boolean lease) {
        awaitingTermCommit.add(new Waiting(List.copyOf(handles), lease));
    }

    /** Removes and returns the reads that waited for the first commit of the term, in arrival order. */
    private List<Waiting> takeAwaitingTermCommit() {
        List<Waiting> out = new ArrayList<>(awaitingTermCommit);
        awaitingTermCommit.clear();
        return out;
    }

    boolean hasAwaitingTermCommit() {
        return !awaitingTermCommit.isEmpty();
    }

    private void add(List<ReadHandle> handles, long readIndex, long round) {
        confirming.add(new Batch(handles, readIndex, round));
    }

    boolean isConfirming() {
        return !confirming.isEmpty();
    }

    /** Releases, in order, every batch whose heartbeat round a quorum has acknowledged. */
    private void confirm(LongPredicate roundAcked, Ready out) {
        while (!confirming.isEmpty() && roundAcked.test(confirming.peek().round())) {
            Batch b = confirming.poll();
            out.event(new Ready.ReadsConfirmed(b.handles(), b.readIndex()));
        }
        if (confirming.isEmpty()) {
            quietRoundDeadlineMs = Long.MAX_VALUE;
        }
    }

    /** Leadership is gone: every read fails (with the new leader as a hint, if known). */
    void failAll(Ready out, PeerId leaderHint) {
        List<ReadHandle> failed = new ArrayList<>();
        for (Waiting w : takeAwaitingTermCommit()) {
            failed.addAll(w.handles());
        }
        for (Batch b : confirming) {
            failed.addAll(b.handles());
        }
        confirming.clear();
        quietRoundDeadlineMs = Long.MAX_VALUE;
        if (!failed.isEmpty()) {
            out.event(new Ready.ReadsFailed(failed, leaderHint));
        }
    }
}
