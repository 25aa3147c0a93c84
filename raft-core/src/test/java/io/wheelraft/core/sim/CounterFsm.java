package io.wheelraft.core.sim;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;

import java.nio.ByteBuffer;

/** A counter for simulation tests: each entry is an 8-byte delta; delta 0 reads the value through the log. */
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

    @Override
    public void onApply(Iterator it) {
        while (it.hasNext()) {
            ByteBuffer data = it.next();
            if (it.index() <= lastIndex) {
                throw new AssertionError("node " + id + " applied index " + it.index() + " after " + lastIndex);
            }
            lastIndex = it.index();
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
