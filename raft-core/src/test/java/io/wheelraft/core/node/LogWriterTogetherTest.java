package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link LogWriter} over a storage that appends together with other groups
 * ({@link LogStorage#appendsTogether()}): appends are handed over from the submitting thread, one
 * write at a time and in order, what queues meanwhile goes into the next write, truncations and
 * resets wait their turn on the disk lane, and a failed write stops everything after it. The
 * storage holds each write until the test makes it durable, and the disk pool runs by hand.
 */
class LogWriterTogetherTest {

    /** One appendAsync call the storage holds: what it asked for and whom to tell. */
    private record Held(long truncateAfter, List<LogEntry> entries, Consumer<RuntimeException> done) {
        List<Long> indexes() {
            return entries.stream().map(LogEntry::getIndex).toList();
        }
    }

    private final MemoryLogStorage memory = new MemoryLogStorage();
    private final List<Held> held = new ArrayList<>();
    private final List<String> diskOps = new ArrayList<>();
    private final LogStorage storage = new Together();
    private final Queue<Runnable> diskPool = new ArrayDeque<>();
    private final List<Long> acknowledged = new ArrayList<>();
    private final List<RuntimeException> failures = new ArrayList<>();
    private final LogWriter writer = new LogWriter(storage, new SerialLane("n-disk", diskPool::add), new LogWriter.Listener() {
        @Override
        public void onWritten(long lastIndex, long lastTerm, long generation) {
            acknowledged.add(lastIndex);
        }

        @Override
        public void onWriteFailed(RuntimeException error) {
            failures.add(error);
        }
    }, null, true);

    private static List<LogEntry> entries(long from, long to, long term) {
        List<LogEntry> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(LogEntry.newBuilder().setIndex(i).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA).build());
        }
        return out;
    }

    /** Makes held write {@code i} durable in the memory log and tells the writer. */
    private void makeDurable(int i) {
        Held h = held.get(i);
        if (h.truncateAfter() >= 0) {
            memory.truncateSuffix(h.truncateAfter());
        }
        memory.append(h.entries());
        h.done().accept(null);
    }

    private void runDiskPool() {
        Runnable r;
        while ((r = diskPool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void anAppendIsHandedOverAtOnceAndAcknowledgedOnlyOnceDurable() {
        writer.submit(-1, entries(1, 2, 1));
        assertEquals(1, held.size(), "handed to the storage by the submitting thread");
        assertTrue(diskPool.isEmpty(), "no disk thread woken for an append");
        assertTrue(acknowledged.isEmpty(), "acknowledged before it was durable");
        makeDurable(0);
        assertEquals(List.of(2L), acknowledged);
    }

    @Test
    void appendsQueuedWhileAWriteIsUnderWayGoIntoTheNextOneInOrder() {
        writer.submit(-1, entries(1, 1, 1));
        writer.submit(-1, entries(2, 3, 1));
        writer.submit(-1, entries(4, 4, 1));
        assertEquals(1, held.size(), "a second write started while the first was under way");
        makeDurable(0);
        assertEquals(2, held.size());
        assertEquals(List.of(2L, 3L, 4L), held.get(1).indexes(), "the queued appends were merged");
        makeDurable(1);
        assertEquals(List.of(1L, 4L), acknowledged);
        assertEquals(4, memory.lastLogIndex());
    }

    @Test
    void anAppendThatTruncatesStartsAWriteOfItsOwnAndCarriesTheCut() {
        writer.submit(-1, entries(1, 3, 1));
        writer.submit(-1, entries(4, 4, 1));
        writer.submit(2, entries(3, 3, 2));
        makeDurable(0);
        assertEquals(List.of(4L), held.get(1).indexes(), "the plain append went alone, before the cut");
        makeDurable(1);
        assertEquals(2, held.get(2).truncateAfter());
        assertEquals(List.of(3L), held.get(2).indexes());
        makeDurable(2);
        assertEquals(List.of(3L, 4L, 3L), acknowledged);
        assertEquals(3, memory.lastLogIndex());
        assertEquals(2, memory.term(3));
    }

    @Test
    void aPrefixTruncationWaitsForTheAppendBeforeItAndAppendsAfterItWaitForIt() {
        writer.submit(-1, entries(1, 5, 1));
        writer.submitTruncatePrefix(3);
        writer.submit(-1, entries(6, 6, 1));
        runDiskPool();
        assertTrue(diskOps.isEmpty(), "the truncation overtook the append under way");
        makeDurable(0);
        assertEquals(1, held.size(), "the append after the truncation overtook it");
        runDiskPool();
        assertEquals(List.of("truncatePrefix 3"), diskOps);
        assertEquals(2, held.size());
        makeDurable(1);
        assertEquals(3, memory.firstLogIndex());
        assertEquals(6, memory.lastLogIndex());
        assertEquals(List.of(5L, 6L), acknowledged);
    }

    @Test
    void aFailedWriteIsReportedOnceAndNothingAfterItIsWritten() {
        writer.submit(-1, entries(1, 1, 1));
        writer.submit(-1, entries(2, 2, 1));
        held.get(0).done().accept(new StorageException("disk full writing entry 1"));
        assertEquals(1, failures.size());
        assertTrue(failures.get(0).getMessage().contains("entry 1"));
        writer.submit(-1, entries(3, 3, 1));
        runDiskPool();
        assertEquals(1, held.size(), "written after a failure");
        assertTrue(acknowledged.isEmpty());
    }

    /** The memory log, but appends are held until the test makes them durable. */
    private final class Together implements LogStorage {
        @Override
        public boolean appendsTogether() {
            return true;
        }

        @Override
        public void appendAsync(long truncateAfter, List<LogEntry> entries, Consumer<RuntimeException> done) {
            held.add(new Held(truncateAfter, List.copyOf(entries), done));
        }

        @Override
        public long firstLogIndex() {
            return memory.firstLogIndex();
        }

        @Override
        public long lastLogIndex() {
            return memory.lastLogIndex();
        }

        @Override
        public LogEntry entry(long index) {
            return memory.entry(index);
        }

        @Override
        public long term(long index) {
            return memory.term(index);
        }

        @Override
        public void append(List<LogEntry> entries) {
            throw new AssertionError("a storage that appends together was asked for a synchronous append");
        }

        @Override
        public void truncatePrefix(long firstIndexKept) {
            diskOps.add("truncatePrefix " + firstIndexKept);
            memory.truncatePrefix(firstIndexKept);
        }

        @Override
        public void truncateSuffix(long lastIndexKept) {
            throw new AssertionError("a cut must travel with its append");
        }

        @Override
        public void reset(long nextLogIndex) {
            diskOps.add("reset " + nextLogIndex);
            memory.reset(nextLogIndex);
        }

        @Override
        public void close() {
            memory.close();
        }
    }
}
