package io.wheelraft.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ConcurrentReadTest {

    @TempDir
    Path dir;

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
