package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.SnapshotStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a starting node does about storage that reported damage when it opened (a dropped WAL
 * tail, a corrupt entry, a snapshot set aside): it fences itself, durably, so that it neither
 * votes nor campaigns with a log that may lack entries it acknowledged, and makes its log
 * continue what is left, so that the leader can send it the rest. Runs once, at start, before
 * the node joins the group.
 */
final class StorageDamage {

    private static final Logger LOG = LoggerFactory.getLogger(StorageDamage.class);

    private StorageDamage() {
    }

    /**
     * Sets the durable repairing flag if a storage found damage at open, before anything else
     * uses the storage.
     *
     * @return true if the node starts fenced: damaged now, or still repairing from an earlier start
     * @throws io.wheelraft.core.spi.StorageException if the flag cannot be written
     */
    static boolean fenceIfDamaged(String name, RaftMetaStorage meta, LogStorage log, SnapshotStorage snapshots) {
        String logDamage = log.damageFoundAtOpen();
        String snapshotDamage = snapshots.damageFoundAtOpen();
        if (logDamage == null && snapshotDamage == null) {
            if (meta.repairing()) {
                LOG.warn("{}: still repairing after an earlier storage fault; fenced (role repairing) until caught up from the leader",
                        name);
                return true;
            }
            return false;
        }
        String what = logDamage == null ? snapshotDamage : snapshotDamage == null ? logDamage : logDamage + "; " + snapshotDamage;
        LOG.warn("{}: storage damage found at open: {}; fenced (role repairing) until caught up from the leader", name, what);
        meta.setRepairing(true);
        return true;
    }

    /**
     * Makes a damaged node's log continue its snapshot ({@code snapshotIndex}, 0 for none): a log
     * that starts after it (the snapshot that covered the gap was set aside, or entries were
     * lost) is emptied to continue right after it, and the leader sends the rest.
     */
    static void reconnectLog(String name, LogStorage log, long snapshotIndex) {
        long first = log.firstLogIndex();
        if (first - 1 <= snapshotIndex) {
            return;
        }
        LOG.warn("{}: the log ({}..{}) does not continue {}; emptied to continue at {} and filled again from the leader", name,
                first, log.lastLogIndex(), snapshotIndex == 0 ? "from index 1 (no snapshot)" : "the snapshot ending at " + snapshotIndex,
                snapshotIndex + 1);
        log.reset(snapshotIndex + 1);
    }
}
