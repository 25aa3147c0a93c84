package io.wheelraft.bench;

import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Memtable insert cost of the log's key layout (4-byte group tag, 8-byte index) with and without
 * RocksDB's per-prefix insert hint ({@code memtable_insert_with_hint_prefix_extractor}, which the
 * store's log column family uses): batches of 8 puts of 100 bytes, each to a random group of G
 * with that group's next index, the WAL off, so the memtable is all that is measured. The two
 * databases take turns in every round. Reports puts per second and CPU nanoseconds per put of
 * the writing thread.
 *
 * <pre>
 * java -cp "raft-bench/target/classes:$(cat raft-bench/target/bench.classpath)" io.wheelraft.bench.MemtableInsertBench \
 *     [--groups 1,256,10000] [--seconds 2] [--rounds 3]
 * </pre>
 */
public final class MemtableInsertBench {

    private static final int BATCH = 8;
    private static final int VALUE_BYTES = 100;

    private MemtableInsertBench() {
    }

    public static void main(String[] args) throws Exception {
        List<Integer> groups = List.of(1, 256, 10_000);
        double seconds = 2;
        int rounds = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--groups" -> groups = Stream.of(args[++i].split(",")).map(Integer::parseInt).toList();
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--groups LIST, --seconds S, --rounds N)");
            }
        }
        RocksDB.loadLibrary();
        System.out.printf(Locale.ROOT, "%-8s %-6s %-5s %14s %12s%n", "groups", "hint", "round", "puts/s", "CPU ns/put");
        for (int g : groups) {
            for (int round = 1; round <= rounds; round++) {
                for (boolean hint : round % 2 == 1 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                    double[] r = run(g, hint, seconds);
                    System.out.printf(Locale.ROOT, "%-8d %-6s %-5d %,14.0f %,12.0f%n", g, hint ? "on" : "off", round, r[0], r[1]);
                }
            }
        }
    }

    /** One database, written for {@code seconds}: {puts per second, CPU ns per put}. */
    private static double[] run(int groups, boolean hint, double seconds) throws RocksDBException, IOException {
        Path dir = Files.createTempDirectory("memtable-insert-bench");
        Properties props = new Properties();
        if (hint) {
            props.setProperty("memtable_insert_with_hint_prefix_extractor", "rocksdb.FixedPrefix.4");
        }
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (ColumnFamilyOptions cf = (hint ? ColumnFamilyOptions.getColumnFamilyOptionsFromProps(props) : new ColumnFamilyOptions())
                .setWriteBufferSize(64L << 20).setMaxWriteBufferNumber(3).setCompressionType(CompressionType.NO_COMPRESSION);
             DBOptions db = new DBOptions().setCreateIfMissing(true);
             WriteOptions noWal = new WriteOptions().setDisableWAL(true);
             RocksDB rocks = RocksDB.open(db, dir.toString(), List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cf)), handles)) {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long[] next = new long[groups];
            SplittableRandom random = new SplittableRandom(42);
            byte[] value = new byte[VALUE_BYTES];
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            long startNanos = System.nanoTime();
            long startCpu = threads.getCurrentThreadCpuTime();
            long puts = 0;
            while (System.nanoTime() < deadline) {
                try (WriteBatch batch = new WriteBatch()) {
                    for (int i = 0; i < BATCH; i++) {
                        int group = random.nextInt(groups);
                        batch.put(handles.get(0), key(group, ++next[group]), value);
                    }
                    rocks.write(noWal, batch);
                }
                puts += BATCH;
            }
            double elapsed = (System.nanoTime() - startNanos) / 1e9;
            double cpuPerPut = (double) (threads.getCurrentThreadCpuTime() - startCpu) / puts;
            handles.forEach(ColumnFamilyHandle::close);
            return new double[] {puts / elapsed, cpuPerPut};
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The log's key: group tag and index, both big-endian (as raft-storage's {@code LogKeys}). */
    private static byte[] key(int group, long index) {
        byte[] k = new byte[12];
        for (int i = 0; i < 4; i++) {
            k[i] = (byte) (group >>> (24 - 8 * i));
        }
        for (int i = 0; i < 8; i++) {
            k[4 + i] = (byte) (index >>> (56 - 8 * i));
        }
        return k;
    }
}
