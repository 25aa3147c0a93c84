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

    /**
     * The state a node starts from; {@code repairing}: fenced after a storage fault until a
     * leader repairs it (see {@link io.wheelraft.core.Role#REPAIRING}).
     */
    record Recovered(long snapshotIndex, RecentEntries recentEntries, RaftLog log, Membership base, MembershipLog memberships,
                     boolean repairing) {
    }

    /**
     * The node must not start: the snapshot could not be loaded into the state machine, or what
     * it stored cannot be trusted (a forgotten vote). The status says what and what to do.
     */
    static final class CannotStart extends Exception {
        private final transient Status status;

        CannotStart(Status status) {
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
     * @throws CannotStart           if the state machine could not load the latest snapshot, or
     *                               the meta is missing while the log or a snapshot is not
     * @throws IllegalStateException if the log has a gap after the snapshot (entries are missing)
     *                               and no storage fault explains it
     */
    static Recovered recover(String name, NodeOptions options) throws CannotStart {
        LogStorage logStorage = options.logStorage();
        SnapshotReader snapshot = options.snapshotStorage().open();
        SnapshotMeta snap = snapshot == null ? SnapshotMeta.getDefaultInstance() : snapshot.meta();
        long snapIndex = snap.getLastIncludedIndex();
        RecentEntries recentEntries = new RecentEntries(options.logCacheEntries(), options.logCacheMaxEntryBytes());
        boolean repairing;
        try {
            refuseForgottenMeta(name, options.metaStorage(), logStorage, snap);
            repairing = StorageDamage.fenceIfDamaged(name, options.metaStorage(), logStorage, options.snapshotStorage());
        } catch (CannotStart | RuntimeException e) {
            if (snapshot != null) {
                snapshot.close();
            }
            throw e;
        }
        RaftLog log;
        try {
            if (repairing) {
                StorageDamage.reconnectLog(name, logStorage, snapIndex);
            }
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
            Status error = FsmCaller.loadInto(WitnessStateMachine.forNode(options), snapshot);
            snapshot.close();
            if (error != null) {
                throw new CannotStart(error);
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
        return new Recovered(snapIndex, recentEntries, log, base, memberships, repairing);
    }

    /**
     * A node whose meta says term 0 while its log or snapshot holds entries of a later term lost
     * its meta: it no longer knows whom it voted for and could vote twice in one term (letting
     * two leaders be elected). That cannot be repaired safely from the cluster.
     */
    private static void refuseForgottenMeta(String name, io.wheelraft.core.spi.RaftMetaStorage meta, LogStorage log,
                                            SnapshotMeta snap) throws CannotStart {
        if (meta.term() != 0) {
            return;
        }
        long last = log.lastLogIndex();
        long logTerm = last >= log.firstLogIndex() ? log.term(last) : 0;
        long seen = Math.max(logTerm, snap.getLastIncludedTerm());
        if (seen > 0) {
            throw new CannotStart(Status.error(io.wheelraft.core.RaftError.STORAGE_ERROR,
                    "the raft meta (term and vote) is missing although the %s holds term %d: its vote is forgotten and it "
                            + "could vote twice in one term. Remove this peer from the group (admin remove-peer), wipe its data "
                            + "directory and add it back (see docs/storage.md)", logTerm >= seen ? "log" : "snapshot", seen));
        }
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
