package io.wheelraft.core.consensus;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;

/**
 * One {@link RaftCore} with its log over a {@link MemoryLogStorage}, a {@link RecordingEffects}
 * and a disk that writes only when the test says so (in queue order, truncation first, as the
 * node shell's LogWriter does), acknowledging each write with {@link RaftCore#onPersisted}.
 * Test thread only.
 */
final class CoreNode {

    static final int ELECTION_TIMEOUT_MS = 1000;
    static final int GRACE_MS = 200;

    final PeerId id;
    final MemoryLogStorage storage = new MemoryLogStorage();
    final RecordingEffects fx = new RecordingEffects();
    final RaftConfig config;
    RaftLog log;
    RaftCore core;

    private CoreNode(PeerId id, RaftConfig config) {
        this.id = id;
        this.config = config;
    }

    static PeerId peer(int n) {
        return new PeerId("n" + n, 7000 + n);
    }

    static List<PeerId> peers(int count) {
        List<PeerId> out = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            out.add(peer(i));
        }
        return out;
    }

    static RaftConfig config(PeerId self, int maxInflight, int maxEntries) {
        return new RaftConfig("g", self, ELECTION_TIMEOUT_MS, GRACE_MS, maxInflight, maxEntries, 1 << 20, false, 0);
    }

    /** A node of {@code members} whose storage already holds entries of the given terms (index 1, 2, ...). */
    static CoreNode create(PeerId self, List<PeerId> members, long term, long[] logTerms, long nowMs) {
        return create(config(self, 4, 64), members, term, logTerms, nowMs);
    }

    static CoreNode create(RaftConfig config, List<PeerId> members, long term, long[] logTerms, long nowMs) {
        return create(config, members, term, logTerms, false, nowMs);
    }

    /** As above; {@code repairing}: the node starts fenced after a storage fault. */
    static CoreNode create(RaftConfig config, List<PeerId> members, long term, long[] logTerms, boolean repairing, long nowMs) {
        return create(config, new Configuration(members), term, logTerms, repairing, nowMs);
    }

    /** As above, in configuration {@code conf} (with its witness marks and priorities). */
    static CoreNode create(RaftConfig config, Configuration conf, long term, long[] logTerms, boolean repairing, long nowMs) {
        CoreNode n = new CoreNode(config.self(), config);
        List<LogEntry> entries = new ArrayList<>();
        for (int i = 0; i < logTerms.length; i++) {
            entries.add(data(i + 1, logTerms[i], "old-" + (i + 1)));
        }
        n.storage.append(entries);
        n.log = new RaftLog(n.storage, 0, 0);
        n.core = new RaftCore(config, n.log, term, null,
                new MembershipLog(Membership.of(conf)), 0, repairing, nowMs);
        n.fx.recordFrom(n.core);
        return n;
    }

    static LogEntry data(long index, long term, String text) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFromUtf8(text)).build();
    }

    /** Carries out every queued log write, in order, acknowledging each. */
    void flushDisk() {
        while (!fx.disk().isEmpty()) {
            flushOne();
        }
    }

    void flushOne() {
        RecordingEffects.Persist w = fx.disk().poll();
        if (w.truncateAfter() >= 0) {
            storage.truncateSuffix(w.truncateAfter());
        }
        storage.append(w.entries());
        core.onPersisted(w.lastIndex(), w.lastTerm(), 0);
    }

    /** Makes this node leader by hand: its election timer fires and every other voter grants. */
    void electByHand(long nowMs) {
        core.onElectionTimeout(nowMs);
        for (RecordingEffects.Send s : fx.takeOutbox()) {
            core.handleRequestVoteResponse(s.to(), s.vote(), granted(s.vote().getTerm() - 1, true), nowMs);
        }
        for (RecordingEffects.Send s : fx.takeOutbox()) {
            if (s.isVote()) {
                core.handleRequestVoteResponse(s.to(), s.vote(), granted(s.vote().getTerm(), false), nowMs);
            }
        }
        if (!core.isLeader()) {
            throw new AssertionError(id + " did not become leader: " + core.role());
        }
    }

    static io.wheelraft.proto.RequestVoteResponse granted(long voterTerm, boolean preVote) {
        return io.wheelraft.proto.RequestVoteResponse.newBuilder().setTerm(voterTerm).setGranted(true).setPreVote(preVote).build();
    }

    List<ByteString> commands(int count) {
        List<ByteString> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(ByteString.copyFromUtf8("cmd-" + i));
        }
        return out;
    }
}
