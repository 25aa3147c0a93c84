package io.wheelraft.core.consensus;

import io.wheelraft.core.Closure;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;

import java.util.ArrayList;
import java.util.List;

/**
 * What one step of {@link RaftCore} decided, as data (in the spirit of etcd raft's {@code Ready}):
 * the node shell takes it with {@link RaftCore#ready()} after every call into the core, carries
 * it out, and {@link #clear() clears} it for the next step. The core never calls the shell.
 *
 * <p>The shell must keep these rules when it carries a batch out:
 * <ol>
 *   <li>{@link #hardState()} and {@link #repairing()} are written durably and synchronously
 *       before anything else of the batch happens; if that fails, nothing of the batch may leave
 *       (no message, no answer, no log write) and the node stops for good. The one exception is
 *       a candidate's own vote requests ({@link #mayLeaveBeforeHardState}): they may leave
 *       while the write of its new term and self-vote is under way, and the candidate counts
 *       its own vote, and any answer, only once that write returned.</li>
 *   <li>{@link #events()} are bookkeeping (role, commit, membership, discarded entries,
 *       finished callers, held pre-vote answers, which change no durable state) and are
 *       handled in the order given.</li>
 *   <li>{@link #logWrites()} are queued in order; each is acknowledged later with
 *       {@link RaftCore#onPersisted}.</li>
 *   <li>{@link #messages()} may leave at once (after rule 1).</li>
 *   <li>A follower's acknowledgement of entries (the answer to AppendEntries) is released only
 *       once the log is durable through the index it acknowledges
 *       ({@link RaftCore.AppendResult#requiredPersistedIndex()} against {@link #durableIndex()});
 *       held ones are released when a step reports the durable point ({@link #durableReported()}).</li>
 * </ol>
 * Reusable and not thread-safe: one per core, used on the node's Raft lane only.
 */
public final class Ready {

    /** Term and vote to write durably before anything of the batch leaves. */
    public record HardState(long term, PeerId votedFor) {
    }

    /**
     * A log write: drop stored entries after {@code truncateAfter} (-1: none), then append
     * {@code entries}. {@code byLeader}: the leader's own write, which is off its commit path
     * (a follower's acknowledgement waits for its write).
     */
    public record LogWrite(long truncateAfter, List<LogEntry> entries, boolean byLeader) {
    }

    /** Something to send to a peer now. */
    public sealed interface Message permits VoteRequest, AppendRequest, TimeoutNow, SnapshotTransfer {
        PeerId to();
    }

    public record VoteRequest(PeerId to, RequestVoteRequest request) implements Message {
    }

    public record AppendRequest(PeerId to, AppendEntriesRequest request) implements Message {
    }

    public record TimeoutNow(PeerId to, TimeoutNowRequest request) implements Message {
    }

    /**
     * {@code to} needs entries this leader of {@code term} has compacted away: stream it the latest
     * snapshot and report the outcome with {@link RaftCore#onSnapshotSent}. A request for a peer
     * whose transfer of the same term is still running is ignored.
     */
    public record SnapshotTransfer(PeerId to, long term) implements Message {
    }

    /** State the core changed, and callers whose request ended, in the order it happened. */
    public sealed interface Event permits RoleChanged, Committed, EntriesDiscarded, MembershipChanged,
            ReadsConfirmed, ReadsFailed, TransferDone, MembershipChangeDone, VoteAnswered, QuietChanged {
    }

    /** The node went quiet (its timers stop) or woke (its role's timers run again); see {@link Quiescence}. */
    public record QuietChanged(boolean quiet) implements Event {
    }

    /** Role, term or known leader changed (timers and listeners follow the role). */
    public record RoleChanged(Role role, long term, PeerId leader) implements Event {
    }

    /** Entries up to {@code index} are committed and durable here: they may be applied. */
    public record Committed(long index) implements Event {
    }

    /**
     * Entries from {@code fromIndex} on were removed from the log (a new leader overwrote them) or
     * will never be acknowledged by this leader: their pending callers and answers fail.
     */
    public record EntriesDiscarded(long fromIndex) implements Event {
    }

    /** The membership in effect changed (a configuration entry was appended or removed). */
    public record MembershipChanged(Membership membership) implements Event {
    }

    /** Leadership is confirmed for these reads: they may run once {@code readIndex} is applied. */
    public record ReadsConfirmed(List<ReadHandle> reads, long readIndex) implements Event {
    }

    /** These reads cannot be served here; {@code leaderHint} is the leader if known. */
    public record ReadsFailed(List<ReadHandle> reads, PeerId leaderHint) implements Event {
    }

    /** A leader transfer ended. */
    public record TransferDone(Closure done, Status status) implements Event {
    }

    /** A membership change ended. */
    public record MembershipChangeDone(Closure done, Status status) implements Event {
    }

    /**
     * A pre-vote answer the core held back (see {@link RaftCore#handleRequestVote(RequestVoteRequest,
     * long, VoteReply)}) is decided: complete {@code to} with {@code answer}.
     */
    public record VoteAnswered(VoteReply to, RequestVoteResponse answer) implements Event {
    }

    private HardState hardState;
    private Boolean repairing;
    // Emptied in place by clear(), so a busy group reuses their arrays batch after batch; the
    // batch that takes the group quiet replaces them instead (releaseArraysOnClear): an
    // empty ArrayList allocates its array on the first add, so a quiet group keeps none (a process
    // hosting many groups has one Ready per group).
    private List<Event> events = new ArrayList<>();
    private List<LogWrite> logWrites = new ArrayList<>();
    private List<Message> messages = new ArrayList<>();
    private boolean electionRetry;
    private boolean awaitCampaignSlot;
    private long wakeAtMs = -1;
    private long durableIndex;
    private boolean durableReported;
    private boolean releaseArrays;

    Ready() {
    }

    // ---------------------------------------------------------------- read by the shell

    /** Term and vote to persist first, or null if unchanged in this step. */
    public HardState hardState() {
        return hardState;
    }

    /**
     * Whether {@code m} may leave before {@link #hardState()} is durable: it is a vote request
     * (not a pre-vote) of the term being written, from the node the write records the vote for,
     * that is, a candidate asking for votes in the term it is entering with its own vote. A
     * request promises nothing (as in etcd raft with asynchronous storage writes, a message may
     * leave before the local write, but a vote or acknowledgement counts only once durable): if
     * the write fails, the node stops without having voted or counted anything in that term, and
     * voters that granted it only wasted their vote of that term. The shell must still handle
     * answers to these requests only after the write returned (on the Raft lane the write is
     * synchronous, so they wait behind it). Everything else waits for the write.
     */
    public boolean mayLeaveBeforeHardState(Message m) {
        return hardState != null && hardState.votedFor() != null && m instanceof VoteRequest v
                && !v.request().getPreVote() && v.request().getTerm() == hardState.term()
                && v.request().getServerId().equals(hardState.votedFor().toString());
    }

    /** The durable "fenced after a storage fault" flag to persist first, or null if unchanged. */
    public Boolean repairing() {
        return repairing;
    }

    public List<Event> events() {
        return events;
    }

    public List<LogWrite> logWrites() {
        return logWrites;
    }

    public List<Message> messages() {
        return messages;
    }

    /**
     * A (pre-)vote round was lost: call {@link RaftCore#onElectionRetry} after a short random
     * pause (a few heartbeat intervals), rather than after a whole election timeout.
     */
    public boolean electionRetry() {
        return electionRetry;
    }

    /**
     * The node would start a round but its process's {@link io.wheelraft.core.CampaignSlots} are all taken: put it
     * in line ({@link io.wheelraft.core.CampaignSlots#awaitSlot}) and call {@link RaftCore#onCampaignSlotGranted}
     * on its lane when a slot is its.
     */
    public boolean awaitCampaignSlot() {
        return awaitCampaignSlot;
    }

    /**
     * The core wants {@link RaftCore#onWake} called at this clock time (or soon after; -1: no new
     * request). Held vote answers and a follower's turn to campaign after a silent leader use it.
     * A request replaces none made before: an earlier one still fires, and an extra call is harmless;
     * pass the requested time to {@link RaftCore#onWake(long, long)}.
     */
    public long wakeAtMs() {
        return wakeAtMs;
    }

    /** How far the log is durable, as of the end of this step. */
    public long durableIndex() {
        return durableIndex;
    }

    /**
     * The step learned how far the log is durable (a disk acknowledgement, or a snapshot installed
     * in place of the log): held acknowledgements up to {@link #durableIndex()} may now go.
     */
    public boolean durableReported() {
        return durableReported;
    }

    /**
     * Nothing to carry out. A batch that only reports the durable point is not empty: it releases
     * held acknowledgements.
     */
    public boolean isEmpty() {
        return hardState == null && repairing == null && events.isEmpty() && logWrites.isEmpty() && messages.isEmpty()
                && !electionRetry && !awaitCampaignSlot && !durableReported && wakeAtMs < 0;
    }

    /** The shell carried the batch out (or stopped): the core fills it again from empty. */
    public void clear() {
        hardState = null;
        repairing = null;
        if (releaseArrays) {
            releaseArrays = false;
            events = new ArrayList<>();
            logWrites = new ArrayList<>();
            messages = new ArrayList<>();
        } else {
            events.clear();
            logWrites.clear();
            messages.clear();
        }
        electionRetry = false;
        awaitCampaignSlot = false;
        durableReported = false;
        wakeAtMs = -1;
    }

    /** The group goes quiet with this batch: once it is carried out, keep no arrays until the next one is filled. */
    void releaseArraysOnClear() {
        releaseArrays = true;
    }

    // ---------------------------------------------------------------- filled by the core

    void hardState(long term, PeerId votedFor) {
        hardState = new HardState(term, votedFor);
    }

    void repairing(boolean value) {
        repairing = value;
    }

    void event(Event e) {
        events.add(e);
    }

    void logWrite(long truncateAfter, List<LogEntry> entries, boolean byLeader) {
        logWrites.add(new LogWrite(truncateAfter, entries, byLeader));
    }

    void send(Message m) {
        messages.add(m);
    }

    void retryElection() {
        electionRetry = true;
    }

    void waitForCampaignSlot() {
        awaitCampaignSlot = true;
    }

    void wakeAt(long atMs) {
        wakeAtMs = atMs;
    }

    void durableIndex(long index) {
        durableIndex = index;
    }

    void reportDurable() {
        durableReported = true;
    }
}
