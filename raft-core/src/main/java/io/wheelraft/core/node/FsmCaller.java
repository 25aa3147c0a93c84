package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.consensus.RecentEntries;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Applies committed entries to the user's {@link StateMachine}, in log order and in batches, on
 * the node's apply lane (never on the Raft lane, so a slow state machine cannot delay
 * heartbeats). Entries are read from the recent-entries cache, else from durable storage: only
 * committed and durable entries are handed here.
 *
 * <p>It also loads snapshots into the state machine (at start, and when the leader installs
 * one) and tracks the configuration in effect at the applied index, which a snapshot records.
 */
final class FsmCaller {

    private static final Logger LOG = LoggerFactory.getLogger(FsmCaller.class);
    private static final int MAX_BATCH = 512;

    private final StateMachine fsm;
    private final LogStorage storage;
    private final RecentEntries recent;
    private final ClosureQueue closures;
    private final SerialLane applyLane;
    /** See {@link io.wheelraft.core.NodeOptions#applyInline()}. */
    private final boolean applyInline;
    private final LongConsumer appliedListener;
    private final Consumer<Status> errorListener;

    /** Reads waiting until the state machine has applied their read index; apply lane only. */
    private final java.util.PriorityQueue<WaitingRead> waitingReads =
            new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(WaitingRead::index));
    private volatile long appliedIndex;
    private volatile long committedIndex;
    private volatile boolean stopped;
    /**
     * The groups of a process mostly apply the same configuration: they share one copy of it
     * (kept for every replica for its snapshots) instead of each holding the entry it applied.
     */
    private static final WeakInterner<ConfigurationEntry> CONFIGURATIONS = new WeakInterner<>();

    /** The last configuration applied (joint ones included), or the snapshot's or bootstrap one. */
    private volatile ConfigurationEntry appliedConfiguration;
    /** While a snapshot from the leader waits to be loaded, the log below it is being replaced: apply nothing. */
    private volatile boolean snapshotPending;

    FsmCaller(StateMachine fsm, LogStorage storage, RecentEntries recent, ClosureQueue closures, SerialLane applyLane,
              boolean applyInline, long appliedIndex, ConfigurationEntry appliedConfiguration, LongConsumer appliedListener,
              Consumer<Status> errorListener) {
        this.appliedConfiguration = CONFIGURATIONS.intern(appliedConfiguration);
        this.fsm = fsm;
        this.storage = storage;
        this.recent = recent;
        this.closures = closures;
        this.applyLane = applyLane;
        this.applyInline = applyInline;
        this.appliedIndex = appliedIndex;
        this.committedIndex = appliedIndex;
        this.appliedListener = appliedListener;
        this.errorListener = errorListener;
    }

    long appliedIndex() {
        return appliedIndex;
    }

    /** The configuration in effect at {@link #appliedIndex()}; read it on the apply lane for a consistent pair. */
    ConfigurationEntry appliedConfiguration() {
        return appliedConfiguration;
    }

    StateMachine stateMachine() {
        return fsm;
    }

    /**
     * Calls {@code onSnapshotLoad} and reports what went wrong, or null if it loaded. Used at
     * start (before the node runs) and on the apply lane.
     */
    static Status loadInto(StateMachine fsm, SnapshotReader reader) {
        long index = reader.meta().getLastIncludedIndex();
        try {
            if (fsm.onSnapshotLoad(reader)) {
                return null;
            }
            return Status.error(RaftError.STATE_MACHINE_ERROR, "onSnapshotLoad refused the snapshot ending at index %d", index);
        } catch (RuntimeException e) {
            LOG.error("onSnapshotLoad threw for the snapshot ending at index {}", index, e);
            return Status.error(RaftError.STATE_MACHINE_ERROR, "onSnapshotLoad threw for the snapshot ending at index %d: %s", index, e);
        }
    }

    /**
     * Stops applying from the log until {@link #loadSnapshot} runs: the log below the snapshot
     * is about to be reset. Call on the Raft lane before queuing the reset.
     */
    void beginSnapshotLoad() {
        snapshotPending = true;
    }

    /**
     * Replaces the state machine's state with {@code reader}'s snapshot on the apply lane, then
     * continues applying after it; {@code done} gets null on success. A failed load stops the
     * caller for good (the state machine may be half loaded and must never serve).
     */
    void loadSnapshot(SnapshotReader reader, Consumer<Status> done) {
        applyLane.execute(() -> {
            long index = reader.meta().getLastIncludedIndex();
            Status error = stopped ? Status.error(RaftError.SHUTTING_DOWN, "the apply lane stopped") : loadInto(fsm, reader);
            reader.close();
            if (error != null) {
                if (!stopped) {
                    fail(error);
                }
                done.accept(error);
                return;
            }
            appliedConfiguration = CONFIGURATIONS.intern(reader.meta().getConfiguration());
            appliedIndex = Math.max(appliedIndex, index);
            committedIndex = Math.max(committedIndex, index);
            snapshotPending = false;
            // Entries up to the snapshot were applied by the leader's state machine, not ours: the
            // outcome of any local closure for them is unknown here.
            closures.failUpTo(index, Status.error(RaftError.LEADERSHIP_LOST,
                    "entries up to %d arrived in a snapshot; their results are unknown here", index));
            appliedListener.accept(appliedIndex);
            releaseReads();
            done.accept(null);
            applyCommitted();
        });
    }

    /**
     * Entries up to {@code index} may be applied; called from the Raft lane. With
     * {@code applyInline} the calling thread applies them itself when the apply lane is idle.
     */
    void commitTo(long index) {
        if (index > committedIndex) {
            committedIndex = index;
            if (applyInline) {
                applyLane.executeHere(this::applyCommitted);
            } else {
                applyLane.execute(this::applyCommitted);
            }
        }
    }

    private record WaitingRead(long index, Runnable action, java.util.function.Consumer<Status> ifNeverApplied) {
    }

    /**
     * Runs {@code action} on the apply lane once entries up to {@code index} are applied, or
     * {@code ifNeverApplied} with the reason if applying stops first (shutdown or an error).
     */
    void runWhenApplied(long index, Runnable action, java.util.function.Consumer<Status> ifNeverApplied) {
        applyLane.execute(() -> {
            if (appliedIndex >= index) {
                CallerCode.run(action);
            } else if (stopped) {
                CallerCode.run(() -> ifNeverApplied.accept(Status.error(RaftError.SHUTTING_DOWN,
                        "the state machine stopped before applying index %d", index)));
            } else {
                waitingReads.add(new WaitingRead(index, action, ifNeverApplied));
            }
        });
    }

    /** Applying stopped for good: no waiting read will ever run; each ends with {@code reason}. Apply lane. */
    private void failWaitingReads(Status reason) {
        WaitingRead w;
        while ((w = waitingReads.poll()) != null) {
            WaitingRead read = w;
            CallerCode.run(() -> read.ifNeverApplied().accept(reason));
        }
    }

    private void releaseReads() {
        while (!waitingReads.isEmpty() && waitingReads.peek().index() <= appliedIndex) {
            CallerCode.run(waitingReads.poll().action()); // a read's closure that throws must not stop the others or the applying
        }
    }

    /** Runs {@code task} on the apply lane, after everything queued so far. */
    void runOnApplyLane(Runnable task) {
        applyLane.execute(task);
    }

    private void applyCommitted() {
        while (!stopped && !snapshotPending && appliedIndex < committedIndex) {
            long from = appliedIndex + 1;
            long to = Math.min(committedIndex, appliedIndex + MAX_BATCH);
            List<LogEntry> data = new ArrayList<>();
            List<Closure> dones = new ArrayList<>();
            long lastDone = appliedIndex;
            for (long i = from; i <= to; i++) {
                LogEntry e = recent.get(i);
                if (e == null) {
                    try {
                        e = storage.entry(i);
                    } catch (StorageException failure) {
                        // A corrupt or unreadable entry is a fault of this node, not of one call:
                        // stop once (role ERROR) rather than retry and log on every commit.
                        if (applyData(data, dones)) { // what was read before it still applies
                            fail(Status.error(RaftError.STORAGE_ERROR, "cannot read committed entry %d to apply it: %s", i,
                                    failure.getMessage()));
                        }
                        return;
                    }
                }
                if (e == null && snapshotPending) {
                    // The log below a snapshot from the leader is being replaced; the load takes over.
                    Status unknown = Status.error(RaftError.LEADERSHIP_LOST, "entry %d arrived in a snapshot; its result is unknown here", i);
                    dones.forEach(d -> {
                        if (d != null) {
                            d.run(unknown);
                        }
                    });
                    return;
                }
                if (e == null) {
                    fail(Status.error(RaftError.STORAGE_ERROR, "committed entry %d is missing from the log (first %d, last %d)",
                            i, storage.firstLogIndex(), storage.lastLogIndex()));
                    return;
                }
                if (e.getType() == EntryType.ENTRY_TYPE_DATA) {
                    data.add(e);
                    dones.add(closures.take(i));
                    continue;
                }
                // A non-data entry ends the batch so callbacks keep log order.
                if (!applyData(data, dones)) {
                    return;
                }
                data.clear();
                dones.clear();
                if (e.getType() == EntryType.ENTRY_TYPE_CONFIGURATION) {
                    appliedConfiguration = CONFIGURATIONS.intern(e.getConfiguration());
                    Membership m = Membership.fromEntry(e.getConfiguration(), i);
                    if (!m.isJoint()) {
                        callSafely(() -> fsm.onConfigurationCommitted(m.current()));
                    }
                }
                closures.take(i);
                lastDone = i;
                appliedIndex = lastDone;
            }
            if (!applyData(data, dones)) {
                return;
            }
            appliedIndex = to;
            appliedListener.accept(to);
            releaseReads();
        }
    }

    /** Applies one batch of data entries; false if the state machine stopped with an error. */
    private boolean applyData(List<LogEntry> data, List<Closure> dones) {
        if (data.isEmpty()) {
            return true;
        }
        ApplyIterator it = new ApplyIterator(data, dones);
        try {
            fsm.onApply(it);
        } catch (RuntimeException e) {
            LOG.error("state machine threw while applying entries {}..{}", data.get(0).getIndex(), data.get(data.size() - 1).getIndex(), e);
            it.setErrorAndRollback(Status.error(RaftError.STATE_MACHINE_ERROR, "onApply threw: " + e));
        }
        int consumed = it.consumed();
        if (consumed > 0) {
            appliedIndex = data.get(consumed - 1).getIndex();
        }
        if (it.error() != null) {
            for (int k = consumed; k < dones.size(); k++) {
                if (dones.get(k) != null) {
                    dones.get(k).run(it.error());
                }
            }
            fail(it.error());
            return false;
        }
        return true;
    }

    private void callSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("state machine callback threw", e);
        }
    }

    /** Stops applying for good; the error listener stops the node, which reports it to {@code onError}. */
    private void fail(Status error) {
        stopped = true;
        failWaitingReads(error);
        errorListener.accept(error);
    }

    /** Reports {@code error} to the state machine's {@code onError} on the apply lane. */
    void reportError(Status error) {
        applyLane.execute(() -> callSafely(() -> fsm.onError(error)));
    }

    void shutdown(Runnable afterwards) {
        applyLane.execute(() -> {
            stopped = true;
            failWaitingReads(Status.error(RaftError.SHUTTING_DOWN, "the node shut down before the read's index was applied"));
            callSafely(fsm::onShutdown);
            afterwards.run();
        });
    }
}
