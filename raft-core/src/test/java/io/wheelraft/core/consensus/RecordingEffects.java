package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.TimeoutNowRequest;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A {@link RaftEffects} that only records: every call becomes an {@link Event} in one ordered
 * list (so tests can check what happened before what), outgoing messages also wait in an outbox
 * for a router, and log writes wait in a disk queue until the test flushes them. Test thread only.
 */
final class RecordingEffects implements RaftEffects {

    sealed interface Event permits HardState, RepairFlag, Persist, Send, RoleChange, Commit, Discarded, MembershipChange,
            ReadsConfirmed, ReadsFailed, ChangeDone, TransferDone, ElectionRetry, SnapshotWanted {
    }

    record HardState(long term, PeerId votedFor) implements Event {
    }

    /** The durable repairing flag was written. */
    record RepairFlag(boolean repairing) implements Event {
    }

    record Persist(long truncateAfter, List<LogEntry> entries) implements Event {
        long lastIndex() {
            return entries.get(entries.size() - 1).getIndex();
        }

        long lastTerm() {
            return entries.get(entries.size() - 1).getTerm();
        }
    }

    /** An outgoing message: a RequestVoteRequest, AppendEntriesRequest or TimeoutNowRequest. */
    record Send(PeerId to, Object message) implements Event {
        boolean isVote() {
            return message instanceof RequestVoteRequest r && !r.getPreVote();
        }

        boolean isPreVote() {
            return message instanceof RequestVoteRequest r && r.getPreVote();
        }

        boolean isAppend() {
            return message instanceof AppendEntriesRequest;
        }

        RequestVoteRequest vote() {
            return (RequestVoteRequest) message;
        }

        AppendEntriesRequest append() {
            return (AppendEntriesRequest) message;
        }
    }

    record RoleChange(Role role, long term, PeerId leader) implements Event {
    }

    record Commit(long index) implements Event {
    }

    record Discarded(long fromIndex) implements Event {
    }

    record MembershipChange(Membership membership) implements Event {
    }

    record ReadsConfirmed(List<Object> handles, long readIndex) implements Event {
    }

    record ReadsFailed(List<Object> handles, PeerId leaderHint) implements Event {
    }

    record ChangeDone(Object handle, io.wheelraft.core.Status status) implements Event {
    }

    record TransferDone(Object handle, io.wheelraft.core.Status status) implements Event {
    }

    record ElectionRetry() implements Event {
    }

    /** The leader asked the shell to stream its snapshot to {@code to}. */
    record SnapshotWanted(PeerId to) implements Event {
    }

    final List<Event> events = new ArrayList<>();
    final Deque<Send> outbox = new ArrayDeque<>();
    final Deque<Persist> disk = new ArrayDeque<>();

    @Override
    public void persistHardState(long term, PeerId votedFor) {
        if (failHardState != null) {
            throw failHardState;
        }
        events.add(new HardState(term, votedFor));
    }

    /** When set, every term/vote or repairing-flag write throws it (a full or failed disk). */
    io.wheelraft.core.spi.StorageException failHardState;

    @Override
    public void persistRepairing(boolean repairing) {
        if (failHardState != null) {
            throw failHardState;
        }
        events.add(new RepairFlag(repairing));
    }

    @Override
    public void persistEntries(long truncateAfter, List<LogEntry> entries) {
        Persist p = new Persist(truncateAfter, List.copyOf(entries));
        events.add(p);
        disk.add(p);
    }

    @Override
    public void sendRequestVote(PeerId to, RequestVoteRequest request) {
        send(to, request);
    }

    @Override
    public void sendAppendEntries(PeerId to, AppendEntriesRequest request) {
        send(to, request);
    }

    @Override
    public void sendTimeoutNow(PeerId to, TimeoutNowRequest request) {
        send(to, request);
    }

    @Override
    public void sendSnapshot(PeerId to) {
        events.add(new SnapshotWanted(to));
    }

    private void send(PeerId to, Object message) {
        Send s = new Send(to, message);
        events.add(s);
        outbox.add(s);
    }

    @Override
    public void roleChanged(Role role, long term, PeerId leader) {
        events.add(new RoleChange(role, term, leader));
    }

    @Override
    public void commitTo(long index) {
        events.add(new Commit(index));
    }

    @Override
    public void entriesDiscarded(long fromIndex) {
        events.add(new Discarded(fromIndex));
    }

    @Override
    public void membershipChanged(Membership membership) {
        events.add(new MembershipChange(membership));
    }

    @Override
    public void readsConfirmed(List<Object> handles, long readIndex) {
        events.add(new ReadsConfirmed(handles, readIndex));
    }

    @Override
    public void readsFailed(List<Object> handles, PeerId leaderHint) {
        events.add(new ReadsFailed(handles, leaderHint));
    }

    @Override
    public void membershipChangeDone(Object handle, io.wheelraft.core.Status status) {
        events.add(new ChangeDone(handle, status));
    }

    @Override
    public void transferDone(Object handle, io.wheelraft.core.Status status) {
        events.add(new TransferDone(handle, status));
    }

    @Override
    public void scheduleElectionRetry() {
        events.add(new ElectionRetry());
    }

    <T extends Event> List<T> all(Class<T> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    List<Send> sends() {
        return all(Send.class);
    }

    /** Removes and returns every message waiting in the outbox. */
    List<Send> takeOutbox() {
        List<Send> out = new ArrayList<>(outbox);
        outbox.clear();
        return out;
    }

    /** Position of the first event matching, or -1. */
    int indexOf(java.util.function.Predicate<Event> p) {
        for (int i = 0; i < events.size(); i++) {
            if (p.test(events.get(i))) {
                return i;
            }
        }
        return -1;
    }

    long lastCommitReported() {
        List<Commit> c = all(Commit.class);
        return c.isEmpty() ? 0 : c.get(c.size() - 1).index();
    }

    void clear() {
        events.clear();
        outbox.clear();
    }
}
