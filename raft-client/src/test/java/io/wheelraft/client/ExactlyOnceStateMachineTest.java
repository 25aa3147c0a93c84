package io.wheelraft.client;

import com.google.protobuf.ByteString;
import io.wheelraft.client.proto.SessionCommand;
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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExactlyOnceStateMachineTest {

    /** A batch of committed entries as the node hands them over, indexes from {@code first}. */
    private static final class Batch implements Iterator {
        final List<ByteBuffer> data = new ArrayList<>();
        final List<Closure> dones = new ArrayList<>();
        final long first;
        int pos = -1;

        Batch(long first) {
            this.first = first;
        }

        Batch add(ByteBuffer d, Closure done) {
            data.add(d);
            dones.add(done);
            return this;
        }

        @Override public long index() { return first + pos; }
        @Override public long term() { return 1; }
        @Override public ByteBuffer data() { return data.get(pos); }
        @Override public Closure done() { return dones.get(pos); }
        @Override public void setErrorAndRollback(Status e) { throw new AssertionError(e.toString()); }
        @Override public boolean hasNext() { return pos + 1 < data.size(); }
        @Override public ByteBuffer next() { return data.get(++pos); }
    }

    private static final class Answer extends ProposalClosure {
        Status status;

        @Override
        public void run(Status s) {
            status = s;
        }
    }

    private static ByteBuffer command(String client, long seq, long id) {
        return SessionCodec.encode(SessionCommand.newBuilder().setFormatVersion(1).setClientId(client).setSequence(seq)
                .setFirstUnacked(1).setLeaderTimeMs(1000).setPayload(ByteString.copyFrom(Ledger.command(id))).build());
    }

    @Test
    void theUserSeesEachCommandOnceAndPlainEntriesUntouched() {
        Ledger ledger = new Ledger();
        ExactlyOnceStateMachine sm = new ExactlyOnceStateMachine(ledger);
        Answer first = new Answer();
        Answer retry = new Answer();
        AtomicReference<Status> plain = new AtomicReference<>();
        sm.onApply(new Batch(1).add(command("a", 1, 10), first).add(command("a", 1, 10), retry)
                .add(ByteBuffer.wrap(Ledger.command(20)), plain::set));
        assertEquals(1, ledger.applications(10));
        assertEquals(1, ledger.applications(20), "an entry the service appended itself reaches the state machine as is");
        assertEquals(2, ledger.total());
        assertTrue(first.status.isOk());
        assertEquals(RetryTable.Kind.DUPLICATE, retry.kind);
        assertArrayEquals(first.result, retry.result, "the retry gets the first answer");
        assertEquals(1, first.index);
        assertEquals(1, retry.index);
        assertEquals(3, sm.appliedIndex());
    }

    @Test
    void theRetryTableTravelsInTheSnapshotBesideTheUsersFiles(@TempDir Path dir) throws Exception {
        ExactlyOnceStateMachine sm = new ExactlyOnceStateMachine(new Ledger());
        sm.onApply(new Batch(1).add(command("a", 1, 10), null));
        try (LocalSnapshotStorage storage = LocalSnapshotStorage.open(dir)) {
            SnapshotWriter writer = storage.create();
            AtomicReference<Status> saved = new AtomicReference<>();
            sm.onSnapshotSave(writer, saved::set);
            assertTrue(saved.get().isOk());
            writer.commit(SnapshotMeta.newBuilder().setLastIncludedIndex(1).setLastIncludedTerm(1).build());

            Ledger restoredLedger = new Ledger();
            ExactlyOnceStateMachine restored = new ExactlyOnceStateMachine(restoredLedger);
            try (SnapshotReader reader = storage.open()) {
                assertTrue(restored.onSnapshotLoad(reader));
            }
            assertTrue(restored.remembers("a"));
            assertEquals(1, restored.appliedIndex());
            Answer retry = new Answer();
            restored.onApply(new Batch(2).add(command("a", 1, 10), retry));
            assertEquals(RetryTable.Kind.DUPLICATE, retry.kind);
            assertEquals(1, restoredLedger.applications(10), "applied once, before the snapshot");
        }
    }
}
