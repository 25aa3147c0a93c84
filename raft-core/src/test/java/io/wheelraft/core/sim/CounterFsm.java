package io.wheelraft.core.sim;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;

import io.wheelraft.core.RaftError;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * A counter for simulation tests: each entry is an 8-byte delta; delta 0 reads the value through
 * the log. Snapshots hold the value and the last applied index in one file; tests can make saves
 * or loads fail, and count the snapshots loaded.
 */
final class CounterFsm extends StateMachineAdapter {

    /** A task closure that receives the counter's value after its entry applied. */
    static final class Result implements Closure {
        private final java.util.function.BiConsumer<Status, Long> callback;
        long value;

        Result(java.util.function.BiConsumer<Status, Long> callback) {
            this.callback = callback;
        }

        @Override
        public void run(Status status) {
            callback.accept(status, status.isOk() ? value : null);
        }
    }

    private final int id;
    private final CommittedLog committed;
    private long value;
    private long lastIndex;
    private int snapshotsLoaded;
    private int snapshotsSaved;
    private long firstAppliedIndex;
    private int errors;
    volatile boolean failSaves;
    volatile boolean failLoads;
    /** Extra bytes written into each snapshot, so a transfer takes many chunks. */
    volatile int snapshotPadding;

    CounterFsm(int id, CommittedLog committed) {
        this.id = id;
        this.committed = committed;
    }

    static ByteBuffer delta(long d) {
        return ByteBuffer.allocate(8).putLong(0, d);
    }

    long value() {
        return value;
    }

    long lastAppliedIndex() {
        return lastIndex;
    }

    int snapshotsLoaded() {
        return snapshotsLoaded;
    }

    int snapshotsSaved() {
        return snapshotsSaved;
    }

    /** The first index handed to onApply by this incarnation (0 if none yet). */
    long firstAppliedIndex() {
        return firstAppliedIndex;
    }

    int errors() {
        return errors;
    }

    @Override
    public void onError(Status error) {
        errors++;
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        if (failSaves) {
            done.run(Status.error(RaftError.STATE_MACHINE_ERROR, "counter " + id + " was told to fail saves"));
            return;
        }
        try (DataOutputStream out = new DataOutputStream(writer.addFile("counter"))) {
            out.writeLong(value);
            out.writeLong(lastIndex);
            out.write(new byte[snapshotPadding]);
        } catch (IOException e) {
            done.run(Status.error(RaftError.STORAGE_ERROR, e.toString()));
            return;
        }
        snapshotsSaved++;
        done.run(Status.ok());
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        if (failLoads) {
            return false;
        }
        try (DataInputStream in = new DataInputStream(reader.openFile("counter"))) {
            value = in.readLong();
            in.readLong();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // The snapshot covers every entry up to its last index, data or not.
        lastIndex = reader.meta().getLastIncludedIndex();
        snapshotsLoaded++;
        return true;
    }

    @Override
    public void onApply(Iterator it) {
        while (it.hasNext()) {
            ByteBuffer data = it.next();
            if (it.index() <= lastIndex) {
                throw new AssertionError("node " + id + " applied index " + it.index() + " after " + lastIndex);
            }
            lastIndex = it.index();
            if (firstAppliedIndex == 0) {
                firstAppliedIndex = lastIndex;
            }
            committed.record(id, it.index(), it.term(), data);
            value += data.getLong(0);
            Closure done = it.done();
            if (done instanceof Result r) {
                r.value = value;
            }
            if (done != null) {
                done.run(Status.ok());
            }
        }
    }
}
