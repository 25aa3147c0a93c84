package io.wheelraft.storage;

import io.wheelraft.proto.LogEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConcurrentReadTest {

    @TempDir
    Path dir;

    @Test
    void readersSeeWholeEntriesWhileTheWriterAppendsAndTruncatesThePrefix() throws Exception {
        try (RocksDbStore store = RocksDbStore.open(dir, RocksDbStoreOptions.defaults().withSync(false))) {
            RocksDbLogStorage log = store.logStorage("g");
            AtomicBoolean done = new AtomicBoolean();
            ExecutorService readers = Executors.newFixedThreadPool(3);
            List<Future<Long>> results = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                results.add(readers.submit(() -> {
                    long reads = 0;
                    while (!done.get()) {
                        long last = log.lastLogIndex();
                        if (last < 1) {
                            continue;
                        }
                        long i = ThreadLocalRandom.current().nextLong(Math.max(1, last - 200), last + 1);
                        LogEntry e = log.entry(i);
                        if (e == null) {
                            assertTrue(i < log.firstLogIndex(), "entry " + i + " vanished while inside the log");
                        } else {
                            assertEquals(CrashAppender.expected(i), e);
                        }
                        reads++;
                    }
                    return reads;
                }));
            }
            long next = 1;
            for (int batch = 0; batch < 400; batch++) {
                List<LogEntry> entries = new ArrayList<>();
                for (int k = 0; k < 8; k++) {
                    entries.add(CrashAppender.expected(next++));
                }
                log.append(entries);
                if (batch % 10 == 9) {
                    log.truncatePrefix(next - 100);
                }
            }
            done.set(true);
            readers.shutdown();
            assertTrue(readers.awaitTermination(30, TimeUnit.SECONDS));
            for (Future<Long> f : results) {
                assertTrue(f.get() > 0, "each reader made progress");
            }
            assertEquals(next - 1, log.lastLogIndex());
        }
    }

    @Test
    void groupsAppendConcurrentlyToOneStore() throws Exception {
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            int groups = 8;
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> futures = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                RocksDbLogStorage log = store.logStorage("g" + g);
                futures.add(pool.submit(() -> {
                    for (long i = 1; i <= 40; i += 4) {
                        log.append(List.of(CrashAppender.expected(i), CrashAppender.expected(i + 1),
                                CrashAppender.expected(i + 2), CrashAppender.expected(i + 3)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
        }
        try (RocksDbStore store = RocksDbStore.open(dir)) {
            for (int g = 0; g < 8; g++) {
                RocksDbLogStorage log = store.logStorage("g" + g);
                assertEquals(40, log.lastLogIndex());
                assertEquals(CrashAppender.expected(33), log.entry(33));
            }
        }
    }
}
