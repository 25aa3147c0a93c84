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

    @Test
    void appliesIncrementsAndAnswersTheNewValue() {
        CounterStateMachine sm = new CounterStateMachine();
        sm.onApply(new Batch().add(ByteBuffer.wrap(CounterStateMachine.encode(5)), null)
                .add(ByteBuffer.wrap(CounterStateMachine.encode(-2)), null));
        assertEquals(3, sm.value());
        assertEquals(2, sm.appliedIndex());
        assertEquals(3, CounterStateMachine.decodeValue(sm.query(ByteBuffer.allocate(0))));
    }

    @Test
    void leavesCompletingClosuresToTheExactlyOnceWrapper() {
        CounterStateMachine sm = new CounterStateMachine();
        AtomicReference<Status> seen = new AtomicReference<>();
        sm.onApply(new Batch().add(ByteBuffer.wrap(CounterStateMachine.encode(1)), seen::set));
        assertEquals(1, sm.value());
        // Closures are the exactly-once wrapper's to complete; the counter only hands back its answer.
        assertEquals(null, seen.get());
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
    void refusesACommandOfAnotherFormat() {
        CounterStateMachine sm = new CounterStateMachine();
        byte[] other = io.wheelraft.example.proto.CounterCommand.newBuilder().setFormatVersion(3).setDelta(1).build().toByteArray();
        Batch batch = new Batch().add(ByteBuffer.wrap(other), null);
        sm.onApply(batch);
        assertTrue(batch.error.message().contains("format 3"), batch.error.message());
    }

    @Test
    void snapshotCarriesTheValue(@TempDir Path dir) throws Exception {
        CounterStateMachine sm = new CounterStateMachine();
        sm.onApply(new Batch().add(ByteBuffer.wrap(CounterStateMachine.encode(4)), null).add(ByteBuffer.wrap(CounterStateMachine.encode(6)), null));
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
            assertEquals(2, restored.appliedIndex());
        }
    }

    @Test
    void decodeNamesABadAnswer() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CounterStateMachine.decodeValue(new byte[3]));
        assertTrue(e.getMessage().contains("8 bytes"));
        assertFalse(e.getMessage().isEmpty());
    }
}
