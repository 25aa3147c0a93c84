package io.wheelraft.storage.bench;

import com.alipay.sofa.jraft.conf.ConfigurationManager;
import com.alipay.sofa.jraft.entity.EnumOutter;
import com.alipay.sofa.jraft.entity.LogId;
import com.alipay.sofa.jraft.entity.codec.v2.LogEntryV2CodecFactory;
import com.alipay.sofa.jraft.option.LogStorageOptions;
import com.alipay.sofa.jraft.option.RaftOptions;
import com.alipay.sofa.jraft.storage.impl.RocksDBLogStorage;
import com.google.protobuf.ByteString;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.storage.RocksDbLogStorage;
import io.wheelraft.storage.RocksDbStore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Append throughput and batch latency with sync on, for batch sizes 1, 16, 256 and entry sizes
 * 16 B, 1 KiB, 16 KiB, measured for three writers in the same run on the same disk:
 * WheelRaft's {@link RocksDbLogStorage}, SOFAJRaft's {@code RocksDBLogStorage}, and a raw Java
 * loop that writes the same bytes per batch and calls {@code FileChannel.force(false)} (the
 * ceiling for one fsync per batch). At each point the three writers, each on a fresh directory,
 * take turns one batch at a time after a short warm-up, so drift in the shared disk's speed does
 * not favour one of them. Prints a Markdown table. Not a unit test; never run by CI.
 *
 * <p>Usage: {@code AppendBenchmark <data dir> <seconds per point>}.
 */
public final class AppendBenchmark {

    private static final int[] BATCH_SIZES = {1, 16, 256};
    private static final int[] ENTRY_SIZES = {16, 1024, 16 * 1024};

    private AppendBenchmark() {
    }

    /** Appends one batch of {@code batch} entries of {@code size} bytes starting at {@code index}. */
    private interface Writer extends AutoCloseable {
        void append(long index, int batch, byte[] payload) throws Exception;

        @Override
        void close() throws Exception;
    }

    private record Result(double entriesPerSec, double mbPerSec, double p50Ms, double p99Ms, long batches) {
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : "target/bench-data").toAbsolutePath();
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 6;
        deleteTree(root);
        Files.createDirectories(root);
        System.out.printf("# raft-storage append benchmark: %d cores, data in %s, sync on,%n"
                        + "# %.1f s per point; the three writers take turns batch by batch (order rotating)%n%n",
                Runtime.getRuntime().availableProcessors(), root, seconds);
        System.out.println("| batch | entry | writer | entries/s | MB/s | batch p50 ms | batch p99 ms | vs jraft | vs raw fsync x batch |");
        System.out.println("|---:|---:|---|---:|---:|---:|---:|---:|---:|");
        String[] names = {"raw write+fsync", "WheelRaft RocksDbLogStorage", "SOFAJRaft RocksDBLogStorage"};
        int run = 0;
        for (int batch : BATCH_SIZES) {
            for (int size : ENTRY_SIZES) {
                byte[] payload = new byte[size];
                new Random(size).nextBytes(payload);
                Result[] results = measurePoint(root.resolve("point-" + run), batch, payload, seconds);
                for (int w = 0; w < 3; w++) {
                    print(batch, size, names[w], results[w], results[2], results[0]);
                }
                run++;
            }
        }
        deleteTree(root);
    }

    /**
     * Runs the three writers in turns, one batch each per turn, so that the shared disk's changing
     * speed (other processes, write-back) hits all three alike. A writer's throughput is its
     * entries divided by the time its own appends took.
     */
    private static Result[] measurePoint(Path dir, int batch, byte[] payload, double seconds) throws Exception {
        Writer[] writers = {rawFsync(dir.resolve("raw")), wheelRaft(dir.resolve("wheelraft")), jraft(dir.resolve("jraft"))};
        long[][] latencies = new long[3][1 << 18];
        int n = 0;
        try {
            long index = 1;
            long warmUpEnd = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() < warmUpEnd) {
                for (Writer w : writers) {
                    w.append(index, batch, payload);
                }
                index += batch;
            }
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end && n < latencies[0].length) {
                for (int k = 0; k < 3; k++) {
                    int w = (k + n) % 3;
                    long t0 = System.nanoTime();
                    writers[w].append(index, batch, payload);
                    latencies[w][n] = System.nanoTime() - t0;
                }
                index += batch;
                n++;
            }
        } finally {
            for (Writer w : writers) {
                w.close();
            }
            deleteTree(dir);
        }
        Result[] results = new Result[3];
        for (int w = 0; w < 3; w++) {
            long[] sorted = Arrays.copyOf(latencies[w], n);
            Arrays.sort(sorted);
            double busySeconds = Arrays.stream(sorted).sum() / 1e9;
            double entriesPerSec = (double) n * batch / busySeconds;
            results[w] = new Result(entriesPerSec, entriesPerSec * payload.length / 1e6, sorted[n / 2] / 1e6,
                    sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e6, n);
        }
        return results;
    }

    private static void print(int batch, int size, String name, Result r, Result jraft, Result raw) {
        System.out.printf("| %d | %s | %s | %,.0f | %.2f | %.2f | %.2f | %.2f | %.2f |%n", batch, sizeName(size), name,
                r.entriesPerSec, r.mbPerSec, r.p50Ms, r.p99Ms, r.entriesPerSec / jraft.entriesPerSec,
                r.entriesPerSec / raw.entriesPerSec);
    }

    private static String sizeName(int size) {
        return size >= 1024 ? (size / 1024) + " KiB" : size + " B";
    }

    private static Writer wheelRaft(Path dir) {
        RocksDbStore store = RocksDbStore.open(dir);
        RocksDbLogStorage log = store.logStorage("bench");
        return new Writer() {
            @Override
            public void append(long index, int batch, byte[] payload) {
                ByteString data = ByteString.copyFrom(payload);
                List<LogEntry> entries = new ArrayList<>(batch);
                for (int i = 0; i < batch; i++) {
                    entries.add(LogEntry.newBuilder().setIndex(index + i).setTerm(1)
                            .setType(EntryType.ENTRY_TYPE_DATA).setData(data).build());
                }
                log.append(entries);
            }

            @Override
            public void close() {
                log.close();
                store.close();
            }
        };
    }

    private static Writer jraft(Path dir) throws IOException {
        Files.createDirectories(dir);
        RaftOptions raftOptions = new RaftOptions();
        raftOptions.setSync(true);
        RocksDBLogStorage log = new RocksDBLogStorage(dir.toString(), raftOptions);
        LogStorageOptions options = new LogStorageOptions();
        options.setGroupId("bench");
        options.setConfigurationManager(new ConfigurationManager());
        options.setLogEntryCodecFactory(LogEntryV2CodecFactory.getInstance());
        if (!log.init(options)) {
            throw new IllegalStateException("SOFAJRaft RocksDBLogStorage failed to init in " + dir);
        }
        return new Writer() {
            @Override
            public void append(long index, int batch, byte[] payload) {
                List<com.alipay.sofa.jraft.entity.LogEntry> entries = new ArrayList<>(batch);
                for (int i = 0; i < batch; i++) {
                    com.alipay.sofa.jraft.entity.LogEntry e =
                            new com.alipay.sofa.jraft.entity.LogEntry(EnumOutter.EntryType.ENTRY_TYPE_DATA);
                    e.setId(new LogId(index + i, 1));
                    e.setData(ByteBuffer.wrap(payload));
                    entries.add(e);
                }
                int written = log.appendEntries(entries);
                if (written != batch) {
                    throw new IllegalStateException("SOFAJRaft appended " + written + " of " + batch);
                }
            }

            @Override
            public void close() {
                log.shutdown();
            }
        };
    }

    private static Writer rawFsync(Path dir) throws IOException {
        Files.createDirectories(dir);
        FileChannel ch = FileChannel.open(dir.resolve("raw.log"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        return new Writer() {
            private ByteBuffer buf = ByteBuffer.allocateDirect(1);

            @Override
            public void append(long index, int batch, byte[] payload) throws IOException {
                int bytes = batch * payload.length;
                if (buf.capacity() < bytes) {
                    buf = ByteBuffer.allocateDirect(bytes);
                }
                buf.clear();
                for (int i = 0; i < batch; i++) {
                    buf.put(payload);
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(false);
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
