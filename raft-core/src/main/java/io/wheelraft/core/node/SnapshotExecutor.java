package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.SnapshotMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Saves snapshots of a node's state machine (on the snapshot timer, or on demand), one at a
 * time. On the apply lane it fixes the applied index, its term and the configuration in effect
 * there, and asks the state machine to write its state ({@code onSnapshotSave}); once the state
 * machine is done, the snapshot is committed to {@link SnapshotStorage} (durable and visible)
 * and only then is the node told, so that it compacts its log.
 *
 * <p>A state machine that fails its own save only abandons that snapshot (one WARN line, the
 * caller told): nothing was lost and the node keeps running. A failure of the snapshot storage
 * (creating or committing the snapshot) is a disk fault: it goes to {@code storageFailed}, which
 * stops the node, as any failed write does. Thread-safe: {@link #save} may be called from any
 * thread; the work runs on the apply lane and on whatever thread the state machine completes
 * its closure.
 */
final class SnapshotExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotExecutor.class);

    /** Where a durable snapshot is announced (to compact the log); it must eventually call {@link #finish}. */
    interface Saved {
        void snapshotSaved(long index, long term, Closure done);
    }

    private final String name;
    private final FsmCaller fsm;
    private final LogStorage log;
    private final SnapshotStorage storage;
    private final Saved saved;
    private final java.util.function.Consumer<Status> storageFailed;
    private final AtomicBoolean saving = new AtomicBoolean();
    /** Last included index of the newest snapshot this node holds (saved, loaded or installed). */
    private volatile long lastSnapshotIndex;

    SnapshotExecutor(String name, FsmCaller fsm, LogStorage log, SnapshotStorage storage, long lastSnapshotIndex, Saved saved,
                     java.util.function.Consumer<Status> storageFailed) {
        this.storageFailed = storageFailed;
        this.name = name;
        this.fsm = fsm;
        this.log = log;
        this.storage = storage;
        this.lastSnapshotIndex = lastSnapshotIndex;
        this.saved = saved;
    }

    /** A snapshot from the leader ending at {@code index} was installed: nothing older needs saving. */
    void noteInstalled(long index) {
        lastSnapshotIndex = Math.max(lastSnapshotIndex, index);
    }

    /**
     * Saves a snapshot of everything applied so far. {@code done} (may be null) gets OK when it is
     * durable (or when nothing was applied since the last one), BUSY while another save runs, or
     * the failure.
     */
    void save(Closure done) {
        if (!saving.compareAndSet(false, true)) {
            complete(done, Status.error(RaftError.BUSY, "%s is already saving a snapshot", name));
            return;
        }
        fsm.runOnApplyLane(() -> saveOnApplyLane(done));
    }

    private void saveOnApplyLane(Closure done) {
        long index = fsm.appliedIndex();
        if (index <= lastSnapshotIndex) {
            finish(done, Status.ok()); // nothing applied since the last snapshot
            return;
        }
        long term = log.term(index);
        if (term == 0) {
            failed(done, Status.error(RaftError.INTERNAL, "%s cannot snapshot at applied index %d: its entry is not in the log (first %d, last %d)",
                    name, index, log.firstLogIndex(), log.lastLogIndex()));
            return;
        }
        ConfigurationEntry conf = fsm.appliedConfiguration();
        SnapshotMeta meta = SnapshotMeta.newBuilder().setLastIncludedIndex(index).setLastIncludedTerm(term)
                .setConfiguration(conf == null ? ConfigurationEntry.getDefaultInstance() : conf).build();
        SnapshotWriter writer;
        try {
            writer = storage.create();
        } catch (RuntimeException e) {
            storageFailed(done, Status.error(RaftError.STORAGE_ERROR, "cannot create a snapshot: %s", message(e)));
            return;
        }
        AtomicBoolean once = new AtomicBoolean();
        Closure stateWritten = status -> {
            if (once.compareAndSet(false, true)) {
                commit(writer, meta, status, done);
            } else {
                LOG.warn("{}: onSnapshotSave completed its closure twice; the second ({}) is ignored", name, status);
            }
        };
        try {
            fsm.stateMachine().onSnapshotSave(writer, stateWritten);
        } catch (RuntimeException e) {
            LOG.error("{}: onSnapshotSave threw at index {}", name, index, e);
            stateWritten.run(Status.error(RaftError.STATE_MACHINE_ERROR, "onSnapshotSave threw: %s", e));
        }
    }

    private void commit(SnapshotWriter writer, SnapshotMeta meta, Status status, Closure done) {
        long index = meta.getLastIncludedIndex();
        if (status == null || !status.isOk()) {
            writer.abort();
            failed(done, status != null ? status : Status.error(RaftError.STATE_MACHINE_ERROR, "onSnapshotSave completed with a null status"));
            return;
        }
        boolean committing = false;
        try {
            if (newerSnapshotHeld(index)) {
                // A snapshot installed from the leader meanwhile already covers this one.
                writer.abort();
                finish(done, Status.ok());
                return;
            }
            committing = true;
            writer.commit(meta);
        } catch (IOException | RuntimeException e) {
            writer.abort();
            Status error = Status.error(RaftError.STORAGE_ERROR, "could not %s the snapshot at index %d: %s",
                    committing ? "commit" : "check for a newer", index, message(e));
            storageFailed(done, error);
            return;
        }
        lastSnapshotIndex = Math.max(lastSnapshotIndex, index);
        LOG.info("{} saved a snapshot ending at {}/{}", name, index, meta.getLastIncludedTerm());
        saved.snapshotSaved(index, meta.getLastIncludedTerm(), done);
    }

    private boolean newerSnapshotHeld(long index) {
        if (lastSnapshotIndex >= index) {
            return true;
        }
        try (SnapshotReader latest = storage.open()) {
            return latest != null && latest.meta().getLastIncludedIndex() >= index;
        }
    }

    /** The state machine failed its own save: abandon this snapshot, keep running (nothing was lost). */
    private void failed(Closure done, Status error) {
        LOG.warn("{}: snapshot abandoned, the node keeps running and applying: {}", name, error);
        finish(done, error);
    }

    /** The snapshot storage failed: a disk fault, which stops the node. */
    private void storageFailed(Closure done, Status error) {
        finish(done, error);
        storageFailed.accept(error);
    }

    static String message(Exception e) {
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    /** Ends the save in progress and completes its closure. */
    void finish(Closure done, Status status) {
        saving.set(false);
        complete(done, status);
    }

    private static void complete(Closure done, Status status) {
        if (done != null) {
            done.run(status);
        }
    }
}
