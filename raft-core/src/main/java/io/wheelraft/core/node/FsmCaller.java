package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Applies committed entries to the user's {@link StateMachine}, in log order and in batches, on
 * the node's apply lane (never on the Raft lane, so a slow state machine cannot delay
 * heartbeats). Entries are read from durable storage: only committed and durable entries are
 * handed here.
 */
final class FsmCaller {

    private static final Logger LOG = LoggerFactory.getLogger(FsmCaller.class);
    private static final int MAX_BATCH = 512;

    private final StateMachine fsm;
    private final LogStorage storage;
    private final ClosureQueue closures;
    private final SerialLane applyLane;
    private final LongConsumer appliedListener;
    private final Consumer<Status> errorListener;

    /** Reads waiting until the state machine has applied their read index; apply lane only. */
    private final java.util.PriorityQueue<WaitingRead> waitingReads =
            new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(WaitingRead::index));
    private volatile long appliedIndex;
    private volatile long committedIndex;
    private volatile boolean stopped;

    FsmCaller(String name, StateMachine fsm, LogStorage storage, ClosureQueue closures, Executor applyPool,
              long appliedIndex, LongConsumer appliedListener, Consumer<Status> errorListener) {
        this.fsm = fsm;
        this.storage = storage;
        this.closures = closures;
        this.applyLane = new SerialLane(name + "-apply", applyPool);
        this.appliedIndex = appliedIndex;
        this.committedIndex = appliedIndex;
        this.appliedListener = appliedListener;
        this.errorListener = errorListener;
    }

    long appliedIndex() {
        return appliedIndex;
    }

    /** Entries up to {@code index} may be applied; called from the Raft lane. */
    void commitTo(long index) {
        if (index > committedIndex) {
            committedIndex = index;
            applyLane.execute(this::applyCommitted);
        }
    }

    private record WaitingRead(long index, Runnable action) {
    }

    /** Runs {@code action} on the apply lane once entries up to {@code index} are applied. */
    void runWhenApplied(long index, Runnable action) {
        applyLane.execute(() -> {
            if (appliedIndex >= index) {
                action.run();
            } else {
                waitingReads.add(new WaitingRead(index, action));
            }
        });
    }

    private void releaseReads() {
        while (!waitingReads.isEmpty() && waitingReads.peek().index() <= appliedIndex) {
            waitingReads.poll().action().run();
        }
    }

    /** Runs {@code task} on the apply lane, after everything queued so far. */
    void runOnApplyLane(Runnable task) {
        applyLane.execute(task);
    }

    private void applyCommitted() {
        while (!stopped && appliedIndex < committedIndex) {
            long from = appliedIndex + 1;
            long to = Math.min(committedIndex, appliedIndex + MAX_BATCH);
            List<LogEntry> data = new ArrayList<>();
            List<Closure> dones = new ArrayList<>();
            long lastDone = appliedIndex;
            for (long i = from; i <= to; i++) {
                LogEntry e = storage.entry(i);
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
                    Membership m = Membership.fromEntry(e.getConfiguration(), i);
                    if (!m.isJoint()) {
                        callSafely(() -> fsm.onConfigurationCommitted(new Configuration(m.current().peers(), m.current().learners())));
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

    private void fail(Status error) {
        stopped = true;
        callSafely(() -> fsm.onError(error));
        errorListener.accept(error);
    }

    void shutdown(Runnable afterwards) {
        applyLane.execute(() -> {
            stopped = true;
            callSafely(fsm::onShutdown);
            afterwards.run();
        });
    }
}
