package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.TimeoutNowRequest;

import java.util.List;

/**
 * What the consensus machine asks the world to do. The machine calls these in the order the
 * work must happen; the node shell carries them out. Ordering rules the shell relies on:
 * {@link #persistHardState} is synchronous and comes before any message of the new term;
 * log writes are asynchronous and acknowledged through {@link RaftCore#onPersisted}, and a
 * follower's acknowledgement of entries is released only after that (see
 * {@link RaftCore.AppendResult#requiredPersistedIndex()}).
 */
public interface RaftEffects {

    /**
     * Durably records term and vote before returning.
     *
     * @throws io.wheelraft.core.spi.StorageException if it could not: the machine then changes
     *         nothing and must not be used again (the shell stops the node)
     */
    void persistHardState(long term, PeerId votedFor);

    /**
     * Durably records whether this node is fenced after a storage fault, before returning (a
     * restart in the middle of a repair stays fenced).
     *
     * @throws io.wheelraft.core.spi.StorageException as {@link #persistHardState}
     */
    void persistRepairing(boolean repairing);

    /**
     * Queues a log write: drop storage entries after {@code truncateAfter} (-1: none), then append
     * {@code entries}. Writes are carried out in the order queued; each is acknowledged with
     * {@link RaftCore#onPersisted(long, long)} for its last entry.
     */
    void persistEntries(long truncateAfter, List<LogEntry> entries);

    void sendRequestVote(PeerId to, RequestVoteRequest request);

    void sendAppendEntries(PeerId to, AppendEntriesRequest request);

    void sendTimeoutNow(PeerId to, TimeoutNowRequest request);

    /**
     * {@code to} needs entries this leader has compacted away: stream it the latest snapshot
     * (InstallSnapshot) and report the outcome with {@link RaftCore#onSnapshotSent}. A request
     * for a peer whose transfer is still running is ignored.
     */
    void sendSnapshot(PeerId to);

    /** Role, term or known leader changed (timers and listeners follow the role). */
    void roleChanged(Role role, long term, PeerId leader);

    /** Entries up to {@code index} are committed and durable here: they may be applied. */
    void commitTo(long index);

    /**
     * Entries from {@code fromIndex} on were removed from the log (a new leader overwrote them) or
     * will never be acknowledged by this leader: their pending closures and responses fail.
     */
    void entriesDiscarded(long fromIndex);

    /** The membership in effect changed (a configuration entry was appended or removed). */
    void membershipChanged(Membership membership);

    /** Leadership is confirmed for these reads: they may run once {@code readIndex} is applied. */
    void readsConfirmed(List<Object> handles, long readIndex);

    /**
     * A (pre-)vote round was lost: call {@link RaftCore#onElectionRetry} after a short random
     * pause (a few heartbeat intervals), rather than after a whole election timeout.
     */
    void scheduleElectionRetry();

    /** A leader transfer started with {@code handle} ended with {@code status}. */
    void transferDone(Object handle, io.wheelraft.core.Status status);

    /** A membership change started with {@code handle} ended with {@code status}. */
    void membershipChangeDone(Object handle, io.wheelraft.core.Status status);

    /** These reads cannot be served here; {@code leaderHint} is the leader if known. */
    void readsFailed(List<Object> handles, PeerId leaderHint);
}
