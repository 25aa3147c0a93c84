package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.SnapshotMeta;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a node rebuilds from storage at start: the log against the snapshot, the snapshot load, the memberships. */
class NodeRecoveryTest {

    private final MemoryLogStorage log = new MemoryLogStorage();
    private final MemorySnapshotStorage snapshots = new MemorySnapshotStorage();
    private final List<Long> loaded = new ArrayList<>();
    private boolean acceptLoad = true;
    private final MemoryMetaStorage meta = new MemoryMetaStorage();
    private String logDamage;
    private String snapshotDamage;

    {
        meta.setTermAndVote(5, null); // the node has voted in terms at least as late as its log's
    }

    private final NodeOptions options = new NodeOptions()
            .initialConfiguration(Configuration.parse("a:1,b:1,c:1"))
            .logStorage(new DamageReporting(log, () -> logDamage))
            .metaStorage(meta)
            .snapshotStorage(new DamageReportingSnapshots(snapshots, () -> snapshotDamage))
            .stateMachine(new StateMachineAdapter() {
                @Override
                public void onApply(Iterator iterator) {
                }

                @Override
                public boolean onSnapshotLoad(SnapshotReader reader) {
                    loaded.add(reader.meta().getLastIncludedIndex());
                    return acceptLoad;
                }
            });

    private static LogEntry data(long index, long term) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFromUtf8("x")).build();
    }

    private static LogEntry members(long index, long term, String... peers) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(List.of(peers))).build();
    }

    private void appendTerms(long... terms) {
        List<LogEntry> entries = new ArrayList<>();
        for (int i = 0; i < terms.length; i++) {
            entries.add(data(i + 1, terms[i]));
        }
        log.append(entries);
    }

    private void saveSnapshot(long index, long term, String... peers) throws IOException {
        SnapshotWriter writer = snapshots.create();
        writer.commit(SnapshotMeta.newBuilder().setLastIncludedIndex(index).setLastIncludedTerm(term)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(List.of(peers))).build());
    }

    @Test
    void withoutASnapshotTheLogIsKeptAndTheMembershipStartsFromTheInitialConfigurationThenItsEntries() throws Exception {
        appendTerms(1, 1);
        log.append(List.of(members(3, 1, "a:1", "b:1")));
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertEquals(0, r.snapshotIndex());
        assertEquals(3, r.log().lastIndex());
        assertEquals(Membership.of(Configuration.parse("a:1,b:1,c:1")), r.base());
        assertEquals(Configuration.parse("a:1,b:1"), r.memberships().current().current(), "the configuration entry at 3");
        assertTrue(loaded.isEmpty(), "nothing to load");
    }

    @Test
    void aLogThatAgreesWithTheSnapshotIsKeptAndOnlyLaterConfigurationEntriesCount() throws Exception {
        appendTerms(1, 1, 2, 2);
        log.append(List.of(members(5, 2, "a:1")));
        log.truncatePrefix(2); // as after an earlier compaction: the log keeps 2..5
        saveSnapshot(3, 2, "a:1", "b:1");
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertEquals(List.of(3L), loaded, "the snapshot was loaded into the state machine");
        assertEquals(3, r.snapshotIndex());
        assertEquals(5, r.log().lastIndex(), "entries after the snapshot survive");
        assertEquals(Configuration.parse("a:1,b:1"), r.base().current(), "the snapshot's configuration, not the initial one");
        assertEquals(Configuration.parse("a:1"), r.memberships().current().current());
    }

    @Test
    void aLogThatEndsBeforeTheSnapshotRestartsAfterIt() throws Exception {
        appendTerms(1, 1);
        saveSnapshot(5, 2, "a:1", "b:1", "c:1");
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertEquals(6, log.firstLogIndex());
        assertEquals(5, r.log().lastIndex(), "empty after the snapshot");
    }

    @Test
    void aLogThatDisagreesWithTheSnapshotAtItsLastIndexRestartsAfterIt() throws Exception {
        appendTerms(1, 1, 1, 1); // term 1 at index 3: the snapshot says term 2 (a crash during an install)
        saveSnapshot(3, 2, "a:1", "b:1", "c:1");
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertEquals(4, log.firstLogIndex());
        assertEquals(3, r.log().lastIndex(), "the disagreeing entries are dropped");
    }

    @Test
    void aSnapshotTheStateMachineRefusesFailsTheRecoveryWithItsStatus() throws Exception {
        appendTerms(1, 1);
        saveSnapshot(2, 1, "a:1");
        acceptLoad = false;
        NodeRecovery.CannotStart e = assertThrows(NodeRecovery.CannotStart.class, () -> NodeRecovery.recover("g/a:1", options));
        assertEquals(RaftError.STATE_MACHINE_ERROR, e.status().code());
        assertTrue(e.status().message().contains("index 2"), e.status().message());
    }

    @Test
    void aGapBetweenTheSnapshotAndTheLogIsRefusedWithTheNodesName() throws Exception {
        appendTerms(1, 1, 1, 1, 1, 1);
        log.truncatePrefix(5); // the log keeps 5..6, the snapshot ends at 2: 3 and 4 are missing
        saveSnapshot(2, 1, "a:1");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> NodeRecovery.recover("g/a:1", options));
        assertTrue(e.getMessage().startsWith("g/a:1 cannot start"), e.getMessage());
    }

    @Test
    void aMissingMetaWithALogOfLaterTermsRefusesToStartAndSaysWhatToDo() {
        appendTerms(1, 3);
        meta.forget();
        NodeRecovery.CannotStart e = assertThrows(NodeRecovery.CannotStart.class, () -> NodeRecovery.recover("g/a:1", options));
        assertEquals(RaftError.STORAGE_ERROR, e.status().code());
        String m = e.status().message();
        assertTrue(m.contains("meta") && m.contains("vote twice") && m.contains("remove-peer") && m.contains("docs/storage.md"), m);
    }

    @Test
    void aFreshNodeWithNothingStoredStarts() throws Exception {
        meta.forget();
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertFalse(r.repairing());
        assertEquals(0, r.log().lastIndex());
    }

    @Test
    void damageFoundAtOpenFencesTheNodeDurablyAndReconnectsTheLog() throws Exception {
        appendTerms(1, 1, 1, 1, 1, 1);
        log.truncatePrefix(5); // the log keeps 5..6; the snapshot that covered 1..4 was damaged and set aside
        snapshotDamage = "snapshot 4 failed its checksum";
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertTrue(r.repairing());
        assertTrue(meta.repairing(), "the fence must be durable before the node runs");
        assertEquals(1, log.firstLogIndex(), "a log that no longer starts at 1 without a snapshot is emptied");
        assertEquals(0, r.log().lastIndex());
    }

    @Test
    void aNodeStillRepairingStaysFencedAfterARestartWithoutNewDamage() throws Exception {
        appendTerms(1, 1);
        meta.setRepairing(true);
        NodeRecovery.Recovered r = NodeRecovery.recover("g/a:1", options);
        assertTrue(r.repairing());
        assertEquals(2, r.log().lastIndex(), "an intact log is kept");
    }

    @Test
    void aFenceThatCannotBeWrittenStopsTheStart() {
        appendTerms(1, 1);
        logDamage = "WAL record at 4096 failed its checksum";
        meta.faults().failNextWrite(new io.wheelraft.core.spi.StorageException("raft_meta: Input/output error"));
        assertThrows(io.wheelraft.core.spi.StorageException.class, () -> NodeRecovery.recover("g/a:1", options));
    }

    /** A log storage that reports {@code damage} found at open. */
    private static final class DamageReporting implements io.wheelraft.core.spi.LogStorage {
        private final MemoryLogStorage d;
        private final java.util.function.Supplier<String> damage;

        DamageReporting(MemoryLogStorage d, java.util.function.Supplier<String> damage) {
            this.d = d;
            this.damage = damage;
        }

        @Override public long firstLogIndex() { return d.firstLogIndex(); }
        @Override public long lastLogIndex() { return d.lastLogIndex(); }
        @Override public LogEntry entry(long index) { return d.entry(index); }
        @Override public long term(long index) { return d.term(index); }
        @Override public void append(List<LogEntry> entries) { d.append(entries); }
        @Override public void truncatePrefix(long firstIndexKept) { d.truncatePrefix(firstIndexKept); }
        @Override public void truncateSuffix(long lastIndexKept) { d.truncateSuffix(lastIndexKept); }
        @Override public void reset(long nextLogIndex) { d.reset(nextLogIndex); }
        @Override public List<LogEntry> configurationEntries() { return d.configurationEntries(); }
        @Override public String damageFoundAtOpen() { return damage.get(); }
        @Override public void close() { d.close(); }
    }

    /** A snapshot storage that reports {@code damage} found at open. */
    private static final class DamageReportingSnapshots implements io.wheelraft.core.spi.SnapshotStorage {
        private final MemorySnapshotStorage d;
        private final java.util.function.Supplier<String> damage;

        DamageReportingSnapshots(MemorySnapshotStorage d, java.util.function.Supplier<String> damage) {
            this.d = d;
            this.damage = damage;
        }

        @Override public io.wheelraft.core.spi.SnapshotWriter create() { return d.create(); }
        @Override public SnapshotReader open() { return d.open(); }
        @Override public io.wheelraft.core.spi.SnapshotReceiver receive(SnapshotMeta m) { return d.receive(m); }
        @Override public String damageFoundAtOpen() { return damage.get(); }
        @Override public void close() { d.close(); }
    }
}
