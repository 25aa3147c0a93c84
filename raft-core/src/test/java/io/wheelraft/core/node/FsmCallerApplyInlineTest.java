package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.consensus.RecentEntries;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code applyInline}: who runs {@code onApply} for a commit, and in what order. */
class FsmCallerApplyInlineTest {

    /** The apply pool, run by hand so a hand-off is observable. */
    private final Queue<Runnable> pool = new ArrayDeque<>();
    private final List<String> calls = new ArrayList<>();
    private final MemoryLogStorage storage = new MemoryLogStorage();

    private FsmCaller caller(boolean applyInline) {
        List<LogEntry> entries = new ArrayList<>();
        for (long i = 1; i <= 3; i++) {
            entries.add(LogEntry.newBuilder().setIndex(i).setTerm(1).setType(EntryType.ENTRY_TYPE_DATA)
                    .setData(ByteString.copyFromUtf8("e" + i)).build());
        }
        storage.append(entries);
        return new FsmCaller(new RecordingMachine(), storage, new RecentEntries(0, 0), new ClosureQueue(), new SerialLane("n-apply", pool::add),
                applyInline, 0, ConfigurationEntry.getDefaultInstance(), applied -> { }, error -> { });
    }

    private void runPool() {
        Runnable r;
        while ((r = pool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void byDefaultACommitIsHandedToTheApplyPool() {
        FsmCaller fsm = caller(false);
        fsm.commitTo(2);
        assertTrue(calls.isEmpty(), "applied on the committing thread: " + calls);
        assertEquals(1, pool.size());
        runPool();
        assertEquals(List.of("apply 1", "apply 2"), calls);
    }

    @Test
    void inlineTheCommittingThreadAppliesWhenTheLaneIsIdle() {
        FsmCaller fsm = caller(true);
        fsm.commitTo(2);
        assertEquals(List.of("apply 1", "apply 2"), calls, "applied before commitTo returned");
        assertTrue(pool.isEmpty(), "no hand-off to the apply pool");
        fsm.commitTo(3);
        assertEquals(List.of("apply 1", "apply 2", "apply 3"), calls);
        assertEquals(3, fsm.appliedIndex());
    }

    @Test
    void inlineACommitWaitsBehindWorkAlreadyQueuedOnTheApplyLane() {
        FsmCaller fsm = caller(true);
        fsm.runOnApplyLane(() -> calls.add("queued task"));
        fsm.commitTo(2);
        assertTrue(calls.isEmpty(), "the lane is busy (its task waits in the pool), so nothing runs inline: " + calls);
        runPool();
        assertEquals(List.of("queued task", "apply 1", "apply 2"), calls);
    }

    @Test
    void aReadWaitingForItsIndexEndsWhenTheNodeShutsDownFirst() {
        FsmCaller fsm = caller(false);
        fsm.commitTo(1);
        runPool();
        fsm.runWhenApplied(3, () -> calls.add("read ran"), st -> calls.add("read ended: " + st.code()));
        runPool();
        assertTrue(calls.stream().noneMatch(c -> c.startsWith("read")), "index 3 is not applied yet: " + calls);
        fsm.shutdown(() -> calls.add("shut down"));
        runPool();
        assertEquals(List.of("apply 1", "read ended: SHUTTING_DOWN", "shut down"), calls);
        fsm.runWhenApplied(3, () -> calls.add("late read ran"), st -> calls.add("late read ended"));
        runPool();
        assertEquals("late read ended", calls.get(calls.size() - 1), "a read asked for after the stop ends at once");
    }

    private final class RecordingMachine extends StateMachineAdapter {
        @Override
        public void onApply(Iterator iterator) {
            while (iterator.hasNext()) {
                iterator.next();
                calls.add("apply " + iterator.index());
            }
        }
    }
}
