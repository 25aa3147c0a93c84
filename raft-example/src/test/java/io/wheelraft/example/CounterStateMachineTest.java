package io.wheelraft.example;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.proto.SnapshotMeta;
import io.wheelraft.storage.LocalSnapshotStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CounterStateMachineTest {

    /** A batch of entries as the node would hand them over, each with an optional closure. */
    private static final class Batch implements Iterator {
        final List<ByteBuffer> data = new ArrayList<>();
        final List<Closure> dones = new ArrayList<>();
        int pos = -1;
        Status error;

        Batch add(ByteBuffer d, Closure done) {
            data.add(d);
            dones.add(done);
            return this;
        }

        @Override public long index() { return pos + 1; }
        @Override public long term() { return 1; }
        @Override public ByteBuffer data() { return data.get(pos); }
        @Override public Closure done() { return dones.get(pos); }
        @Override public void setErrorAndRollback(Status e) { error = e; }
        @Override public boolean hasNext() { return pos + 1 < data.size(); }
        @Override public ByteBuffer next() { return data.get(++pos); }
    }

    private static final class Recording extends IncrClosure {
        Status status;

        @Override
        public void run(Status s) {
            status = s;
        }
    }

    @Test
    void appliesIncrementsAndHandsTheValueToTheClosure() {
        CounterStateMachine sm = new CounterStateMachine();
        Recording a = new Recording();
        Recording b = new Recording();
        sm.onApply(new Batch().add(CounterStateMachine.encode("c1", 1, 5), a).add(CounterStateMachine.encode("c2", 1, -2), b));
        assertEquals(3, sm.value());
        assertTrue(a.status.isOk());
        assertEquals(IncrClosure.Result.APPLIED, a.result());
        assertEquals(5, a.value());
        assertEquals(3, b.value());
    }

    @Test
    void retriedIncrementWithTheSameSequenceIsAppliedOnceAndGetsTheFirstAnswer() {
        CounterStateMachine sm = new CounterStateMachine();
        Recording first = new Recording();
        Recording retry = new Recording();
        sm.onApply(new Batch().add(CounterStateMachine.encode("c1", 1, 10), first)
                .add(CounterStateMachine.encode("other", 1, 1), null)
                .add(CounterStateMachine.encode("c1", 1, 10), retry));
        assertEquals(11, sm.value());
        assertEquals(IncrClosure.Result.DUPLICATE, retry.result());
        assertEquals(10, retry.value());
    }

    @Test
    void olderSequenceThanTheLastAppliedIsIgnoredAsStale() {
        CounterStateMachine sm = new CounterStateMachine();
        Recording stale = new Recording();
        sm.onApply(new Batch().add(CounterStateMachine.encode("c1", 2, 1), null).add(CounterStateMachine.encode("c1", 1, 1), stale));
        assertEquals(1, sm.value());
        assertEquals(IncrClosure.Result.STALE, stale.result());
    }

    @Test
    void runsClosuresThatAreNotItsOwnType() {
        CounterStateMachine sm = new CounterStateMachine();
        AtomicReference<Status> seen = new AtomicReference<>();
        sm.onApply(new Batch().add(CounterStateMachine.encode("c1", 1, 1), seen::set));
        assertTrue(seen.get().isOk());
    }

    @Test
    void refusesAnEntryThatIsNotACounterCommand() {
        CounterStateMachine sm = new CounterStateMachine();
        Batch batch = new Batch().add(ByteBuffer.wrap(new byte[] {(byte) 0xff, (byte) 0xff, 0x01}), null);
        sm.onApply(batch);
        assertNotNull(batch.error);
        assertEquals(0, sm.value());
    }

    @Test
    void refusesACommandOfANewerFormat() {
        CounterStateMachine sm = new CounterStateMachine();
        byte[] newer = io.wheelraft.rpc.proto.counter.CounterCommand.newBuilder().setFormatVersion(2).setClientId("c").setSequence(1)
                .setDelta(1).build().toByteArray();
        Batch batch = new Batch().add(ByteBuffer.wrap(newer), null);
        sm.onApply(batch);
        assertTrue(batch.error.message().contains("format 2"), batch.error.message());
    }

    @Test
    void snapshotCarriesValueAndSessionsSoRetriesStayExactlyOnceAfterLoading(@TempDir Path dir) throws Exception {
        CounterStateMachine sm = new CounterStateMachine();
        sm.onApply(new Batch().add(CounterStateMachine.encode("c1", 7, 4), null).add(CounterStateMachine.encode("c2", 3, 6), null));
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotWriter writer = storage.create();
            AtomicReference<Status> saved = new AtomicReference<>();
            sm.onSnapshotSave(writer, saved::set);
            assertTrue(saved.get().isOk());
            writer.commit(SnapshotMeta.newBuilder().setLastIncludedIndex(2).setLastIncludedTerm(1).build());

            CounterStateMachine restored = new CounterStateMachine();
            try (SnapshotReader reader = storage.open()) {
                assertTrue(restored.onSnapshotLoad(reader));
            }
            assertEquals(10, restored.value());
            assertEquals(2, restored.sessionCount());
            Recording retry = new Recording();
            restored.onApply(new Batch().add(CounterStateMachine.encode("c1", 7, 4), retry));
            assertEquals(10, restored.value());
            assertEquals(IncrClosure.Result.DUPLICATE, retry.result());
            assertEquals(4, retry.value());
        }
    }

    @Test
    void encodeNamesTheBadArgument() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CounterStateMachine.encode("c", 0, 1));
        assertTrue(e.getMessage().contains("sequence"));
        assertFalse(e.getMessage().isEmpty());
    }
}
