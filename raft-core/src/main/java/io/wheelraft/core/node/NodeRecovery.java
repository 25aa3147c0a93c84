package io.wheelraft.core.node;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.consensus.MembershipLog;
import io.wheelraft.core.consensus.RaftLog;
import io.wheelraft.core.consensus.RecentEntries;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.SnapshotMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node rebuilds from its storage when it starts, before it joins the group: the log made to
 * continue the latest snapshot, that snapshot loaded into the state machine, and the membership
 * history (the snapshot's configuration, or the initial one, then every configuration entry the
 * log holds after it). Kept out of {@link NodeImpl} because it runs once and touches no running
 * state.
 */
final class NodeRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(NodeRecovery.class);

    /** The state a node starts from. */
    record Recovered(long snapshotIndex, RecentEntries recentEntries, RaftLog log, Membership base, MembershipLog memberships) {
    }

    /** The snapshot could not be loaded into the state machine: the node must not serve. */
    static final class SnapshotLoadFailed extends Exception {
        private final transient Status status;

        SnapshotLoadFailed(Status status) {
            super(status.toString());
            this.status = status;
        }

        Status status() {
            return status;
        }
    }

    private NodeRecovery() {
    }

    /**
     * @param name the node's name for logs and errors
     * @throws SnapshotLoadFailed    if the state machine could not load the latest snapshot
     * @throws IllegalStateException if the log has a gap after the snapshot (entries are missing)
     */
    static Recovered recover(String name, NodeOptions options) throws SnapshotLoadFailed {
        LogStorage logStorage = options.logStorage();
        SnapshotReader snapshot = options.snapshotStorage().open();
        SnapshotMeta snap = snapshot == null ? SnapshotMeta.getDefaultInstance() : snapshot.meta();
        long snapIndex = snap.getLastIncludedIndex();
        RecentEntries recentEntries = new RecentEntries(options.logCacheEntries(), options.logCacheMaxEntryBytes());
        RaftLog log;
        try {
            if (snapshot != null) {
                alignLogWithSnapshot(name, logStorage, snap);
            }
            log = new RaftLog(logStorage, snapIndex, snap.getLastIncludedTerm(), recentEntries);
        } catch (IllegalStateException e) {
            if (snapshot != null) {
                snapshot.close();
            }
            throw new IllegalStateException(name + " cannot start: " + e.getMessage(), e);
        }
        if (snapshot != null) {
            Status error = FsmCaller.loadInto(options.stateMachine(), snapshot);
            snapshot.close();
            if (error != null) {
                throw new SnapshotLoadFailed(error);
            }
            LOG.info("{} loaded its snapshot ending at {}/{}", name, snapIndex, snap.getLastIncludedTerm());
        }
        Membership base = snap.getConfiguration().getPeersCount() > 0
                ? Membership.fromEntry(snap.getConfiguration(), snapIndex)
                : Membership.of(options.initialConfiguration());
        MembershipLog memberships = new MembershipLog(base);
        for (LogEntry e : logStorage.configurationEntries()) {
            if (e.getIndex() > snapIndex) {
                memberships.add(Membership.fromEntry(e.getConfiguration(), e.getIndex()));
            }
        }
        return new Recovered(snapIndex, recentEntries, log, base, memberships);
    }

    /**
     * Makes the stored log continue the snapshot: a log that ends before it, or holds a different
     * entry at its last index (the node crashed while installing it), is dropped.
     */
    private static void alignLogWithSnapshot(String name, LogStorage logStorage, SnapshotMeta snap) {
        long index = snap.getLastIncludedIndex();
        long first = logStorage.firstLogIndex();
        long last = logStorage.lastLogIndex();
        if (first - 1 > index) {
            return; // a gap: the RaftLog refuses it with the details
        }
        boolean endsBefore = last < index;
        boolean disagrees = !endsBefore && index >= first && logStorage.term(index) != snap.getLastIncludedTerm();
        if (endsBefore || disagrees) {
            LOG.info("{}: the log ({}..{}) {} the snapshot ending at {}/{}; it restarts after the snapshot", name, first, last,
                    endsBefore ? "ends before" : "disagrees with", index, snap.getLastIncludedTerm());
            logStorage.reset(index + 1);
        }
    }
}
