package io.wheelraft.core.node;

import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code writeInline}: which appends a {@link LogWriter} writes on the submitting thread, and that
 * order and group commit are kept for the rest. The disk pool is run by hand and the clock is
 * manual; every write "takes" {@link #WRITE_NANOS} on it.
 */
class LogWriterWriteInlineTest {

    private static final long WRITE_NANOS = 100;

    private final Queue<Runnable> diskPool = new ArrayDeque<>();
    private final AtomicLong clock = new AtomicLong(1_000);
    /** Each storage.append call, as the indexes it wrote. */
    private final List<List<Long>> appendCalls = new ArrayList<>();
    /** Each acknowledgement, as the last index it covers. */
    private final List<Long> acknowledged = new ArrayList<>();
    private final LogStorage storage = new TimedStorage(new MemoryLogStorage());
    private long nextIndex = 1;

    private LogWriter writer(boolean inline) {
        LogWriter.Listener listener = new LogWriter.Listener() {
            @Override
            public void onWritten(long lastIndex, long lastTerm, long generation) {
                acknowledged.add(lastIndex);
            }

            @Override
            public void onWriteFailed(RuntimeException error) {
                throw error;
            }
        };
        return new LogWriter(storage, new SerialLane("n-disk", diskPool::add), listener, inline ? clock::get : null);
    }

    private List<LogEntry> nextEntry() {
        long i = nextIndex++;
        return List.of(LogEntry.newBuilder().setIndex(i).setTerm(1).setType(EntryType.ENTRY_TYPE_DATA).build());
    }

    private void runDiskPool() {
        Runnable r;
        while ((r = diskPool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void withoutAnInlineClockEveryAppendGoesToTheDiskPool() {
        LogWriter w = writer(false);
        w.submit(-1, nextEntry(), true);
        assertTrue(appendCalls.isEmpty(), "written on the submitting thread");
        runDiskPool();
        assertEquals(List.of(List.of(1L)), appendCalls);
        assertEquals(List.of(1L), acknowledged);
    }

    @Test
    void aSparseAppendIsWrittenAndAcknowledgedBeforeSubmitReturns() {
        LogWriter w = writer(true);
        w.submit(-1, nextEntry(), true);
        assertEquals(List.of(List.of(1L)), appendCalls);
        assertEquals(List.of(1L), acknowledged);
        assertTrue(diskPool.isEmpty(), "no disk thread woken");

        clock.addAndGet(10 * WRITE_NANOS); // far more than twice the last write apart: still sparse
        w.submit(-1, nextEntry(), true);
        assertEquals(List.of(List.of(1L), List.of(2L)), appendCalls);
        assertTrue(diskPool.isEmpty());
    }

    @Test
    void appendsThatComeCloseTogetherKeepTheHandOffAndShareOneWrite() {
        LogWriter w = writer(true);
        w.submit(-1, nextEntry(), true); // sparse (the first): inline
        clock.addAndGet(WRITE_NANOS / 2); // within twice the last write's duration of the previous submit
        w.submit(-1, nextEntry(), true);
        clock.addAndGet(WRITE_NANOS / 2);
        w.submit(-1, nextEntry(), true);
        assertEquals(List.of(List.of(1L)), appendCalls, "the close ones waited for the disk pool");
        runDiskPool();
        assertEquals(List.of(List.of(1L), List.of(2L, 3L)), appendCalls, "one group commit for both");
        assertEquals(List.of(1L, 3L), acknowledged);
    }

    @Test
    void theLeadersOwnAppendsAreNeverWrittenInline() {
        LogWriter w = writer(true);
        w.submit(-1, nextEntry(), false);
        assertTrue(appendCalls.isEmpty());
        runDiskPool();
        assertEquals(List.of(List.of(1L)), appendCalls);
    }

    @Test
    void aSparseAppendWaitsBehindAWriteAlreadyQueuedForTheDiskPool() {
        LogWriter w = writer(true);
        w.submit(-1, nextEntry(), false); // queued on the disk lane, its pool task not yet run
        clock.addAndGet(10 * WRITE_NANOS);
        w.submit(-1, nextEntry(), true); // sparse, but the lane is busy: it must not overtake entry 1
        assertTrue(appendCalls.isEmpty(), "written ahead of the queued write: " + appendCalls);
        runDiskPool();
        assertEquals(List.of(List.of(1L, 2L)), appendCalls);
        assertEquals(List.of(2L), acknowledged);
    }

    /** Records each append and advances the manual clock by {@link #WRITE_NANOS} while it "writes". */
    private final class TimedStorage implements LogStorage {
        private final LogStorage delegate;

        TimedStorage(LogStorage delegate) {
            this.delegate = delegate;
        }

        @Override
        public void append(List<LogEntry> entries) {
            clock.addAndGet(WRITE_NANOS);
            appendCalls.add(entries.stream().map(LogEntry::getIndex).toList());
            delegate.append(entries);
        }

        @Override
        public long firstLogIndex() {
            return delegate.firstLogIndex();
        }

        @Override
        public long lastLogIndex() {
            return delegate.lastLogIndex();
        }

        @Override
        public LogEntry entry(long index) {
            return delegate.entry(index);
        }

        @Override
        public long term(long index) {
            return delegate.term(index);
        }

        @Override
        public void truncatePrefix(long firstIndexKept) {
            delegate.truncatePrefix(firstIndexKept);
        }

        @Override
        public void truncateSuffix(long lastIndexKept) {
            delegate.truncateSuffix(lastIndexKept);
        }

        @Override
        public void reset(long nextLogIndex) {
            delegate.reset(nextLogIndex);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
