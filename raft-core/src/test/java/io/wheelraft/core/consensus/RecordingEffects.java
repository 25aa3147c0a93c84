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
 * Records what a core decides: whenever a test looks, the core's {@link Ready} batch (everything
 * decided since the last look) is taken and turned into {@link Event}s in one ordered list, in
 * the order the node shell carries a batch out (hard state, events, log writes, messages, retry).
 * Outgoing messages also wait in an outbox for a router, and log writes wait in a disk queue until
 * the test flushes them. Test thread only.
 */
final class RecordingEffects {

    /** A read caller for tests: only its name matters. */
    record TestRead(String name) implements ReadHandle {
        @Override
        public void confirmed(long readIndex) {
        }

        @Override
        public void failed(PeerId leaderHint) {
        }
    }

    static ReadHandle read(String name) {
        return new TestRead(name);
    }

    private RaftCore core;

    /** The core whose batches this records. */
    void recordFrom(RaftCore core) {
        this.core = core;
    }

    sealed interface Event permits HardState, RepairFlag, Persist, Send, RoleChange, Commit, Discarded, MembershipChange,
            ReadsConfirmed, ReadsFailed, ChangeDone, TransferDone, ElectionRetry, SnapshotWanted, VoteAnswered {
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

    record ReadsConfirmed(List<ReadHandle> handles, long readIndex) implements Event {
    }

    record ReadsFailed(List<ReadHandle> handles, PeerId leaderHint) implements Event {
    }

    record ChangeDone(io.wheelraft.core.Closure handle, io.wheelraft.core.Status status) implements Event {
    }

    record TransferDone(io.wheelraft.core.Closure handle, io.wheelraft.core.Status status) implements Event {
    }

    record ElectionRetry() implements Event {
    }

    /** A held pre-vote answer was decided; the recorder completes {@code to} as the shell would. */
    record VoteAnswered(VoteReply to,
                        io.wheelraft.proto.RequestVoteResponse answer) implements Event {
    }

    /** The wake-ups the core asked for ({@link Ready#wakeAtMs}), in order (kept apart from the events). */
    final List<Long> wakes = new ArrayList<>();

    /** The leader asked the shell to stream its snapshot to {@code to}. */
    record SnapshotWanted(PeerId to) implements Event {
    }

    private final List<Event> events = new ArrayList<>();
    private final Deque<Send> outbox = new ArrayDeque<>();
    private final Deque<Persist> disk = new ArrayDeque<>();

    /** When set, a batch with a term/vote or repairing-flag write throws it, and nothing of that batch happens. */
    io.wheelraft.core.spi.StorageException failHardState;

    /** Takes the core's batch and records it, in the shell's order. */
    void drain() {
        if (core == null) {
            return;
        }
        Ready r = core.ready();
        try {
            if ((r.hardState() != null || r.repairing() != null) && failHardState != null) {
                throw failHardState;
            }
            if (r.hardState() != null) {
                events.add(new HardState(r.hardState().term(), r.hardState().votedFor()));
            }
            if (r.repairing() != null) {
                events.add(new RepairFlag(r.repairing()));
            }
            for (Ready.Event e : r.events()) {
                events.add(toEvent(e));
            }
            for (Ready.LogWrite w : r.logWrites()) {
                Persist p = new Persist(w.truncateAfter(), List.copyOf(w.entries()));
                events.add(p);
                disk.add(p);
            }
            for (Ready.Message m : r.messages()) {
                if (m instanceof Ready.VoteRequest v) {
                    send(v.to(), v.request());
                } else if (m instanceof Ready.AppendRequest a) {
                    send(a.to(), a.request());
                } else if (m instanceof Ready.TimeoutNow n) {
                    send(n.to(), n.request());
                } else if (m instanceof Ready.SnapshotTransfer s) {
                    events.add(new SnapshotWanted(s.to()));
                }
            }
            if (r.electionRetry()) {
                events.add(new ElectionRetry());
            }
            if (r.wakeAtMs() >= 0) {
                wakes.add(r.wakeAtMs());
            }
        } finally {
            r.clear();
        }
    }

    private static Event toEvent(Ready.Event e) {
        if (e instanceof Ready.RoleChanged r) {
            return new RoleChange(r.role(), r.term(), r.leader());
        } else if (e instanceof Ready.Committed c) {
            return new Commit(c.index());
        } else if (e instanceof Ready.EntriesDiscarded d) {
            return new Discarded(d.fromIndex());
        } else if (e instanceof Ready.MembershipChanged m) {
            return new MembershipChange(m.membership());
        } else if (e instanceof Ready.ReadsConfirmed r) {
            return new ReadsConfirmed(r.reads(), r.readIndex());
        } else if (e instanceof Ready.ReadsFailed r) {
            return new ReadsFailed(r.reads(), r.leaderHint());
        } else if (e instanceof Ready.TransferDone d) {
            return new TransferDone(d.done(), d.status());
        } else if (e instanceof Ready.MembershipChangeDone d) {
            return new ChangeDone(d.done(), d.status());
        } else if (e instanceof Ready.VoteAnswered v) {
            v.to().send(v.answer());
            return new VoteAnswered(v.to(), v.answer());
        }
        throw new AssertionError("unknown event " + e);
    }

    private void send(PeerId to, Object message) {
        Send s = new Send(to, message);
        events.add(s);
        outbox.add(s);
    }

    List<Event> events() {
        drain();
        return events;
    }

    Deque<Send> outbox() {
        drain();
        return outbox;
    }

    Deque<Persist> disk() {
        drain();
        return disk;
    }

    <T extends Event> List<T> all(Class<T> type) {
        return events().stream().filter(type::isInstance).map(type::cast).toList();
    }

    List<Send> sends() {
        return all(Send.class);
    }

    /** Removes and returns every message waiting in the outbox. */
    List<Send> takeOutbox() {
        drain();
        List<Send> out = new ArrayList<>(outbox);
        outbox.clear();
        return out;
    }

    /** Position of the first event matching, or -1. */
    int indexOf(java.util.function.Predicate<Event> p) {
        drain();
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
        drain();
        events.clear();
        outbox.clear();
    }
}
