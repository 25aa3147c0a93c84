package io.wheelraft.storage;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.LogEntry;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Child process of {@link CrashRecoveryTest}: appends batches of deterministic entries to group
 * "crash" in the store at {@code args[0]} forever, and prints {@code ACK <last index>} after each
 * append returns (and {@code META <term>} after each term write), until it is killed. Optional
 * {@code args[1]} and {@code args[2]}: the log memtable size and the pre-sized WAL size in bytes
 * (small values make RocksDB switch and recycle WAL files every few appends).
 */
public final class CrashAppender {

    private CrashAppender() {
    }

    /** The entry every run writes at {@code index}: its term and payload depend only on the index. */
    static LogEntry expected(long index) {
        int size = (int) ((index * 7919) % 3000);
        return TestEntries.data(index, 1 + index / 100, TestEntries.payload(index, size));
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        PrintStream out = System.out;
        Random random = new Random();
        RocksDbStoreOptions options = RocksDbStoreOptions.defaults();
        if (args.length == 3) {
            long memtable = Long.parseLong(args[1]);
            options = options.withWriteBufferBytes(memtable).withMaxTotalWalBytes(memtable * 3 / 2)
                    .withPresizedWalBytes(Long.parseLong(args[2]));
        }
        try (RocksDbStore store = RocksDbStore.open(dir.resolve("log"), options);
             FileMetaStorage meta = FileMetaStorage.open(dir.resolve("meta"))) {
            RocksDbLogStorage log = store.logStorage("crash");
            out.println("READY " + log.lastLogIndex());
            out.flush();
            long term = meta.term();
            while (true) {
                long next = log.lastLogIndex() + 1;
                int batch = 1 + random.nextInt(random.nextBoolean() ? 4 : 64);
                List<LogEntry> entries = new ArrayList<>(batch);
                for (int i = 0; i < batch; i++) {
                    entries.add(expected(next + i));
                }
                log.append(entries);
                out.println("ACK " + log.lastLogIndex());
                out.flush();
                if (random.nextInt(8) == 0) {
                    meta.setTermAndVote(++term, new PeerId("node", 1000 + (int) (term % 3)));
                    out.println("META " + term);
                    out.flush();
                }
            }
        }
    }
}
