package io.wheelraft.storage;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.RaftMetaRecord;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Latency of one durable term/vote write, the layout-1 path (write a temp file, fsync, rename,
 * fsync the directory) against the two-slot path of {@link FileMetaStorage} (overwrite one
 * preallocated slot, {@code fdatasync}). The two take turns one write at a time, each in its own
 * directory on the same disk, so drift in a shared disk's speed does not favour either. Prints
 * p50/p90/p99/max in microseconds and the load average before and after. Not a unit test; never
 * run by CI.
 *
 * <p>Usage: {@code MetaWriteBenchmark <data dir> <writes per path>} (command in docs/benchmarks.md).
 * It is in this package because the layout-1 write ({@link DurableFiles}) is package-private.
 */
public final class MetaWriteBenchmark {

    private MetaWriteBenchmark() {
    }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : "target/bench-data").toAbsolutePath().resolve("meta-write");
        int writes = args.length > 1 ? Integer.parseInt(args[1].trim()) : 2_000;
        deleteRecursively(root);
        Path oldDir = Files.createDirectories(root.resolve("layout-1"));
        Path oldFile = oldDir.resolve(FileMetaStorage.FILE_NAME);
        String loadBefore = loadAverage();
        long[] oldNanos = new long[writes];
        long[] newNanos = new long[writes];
        PeerId vote = PeerId.parse("10.0.0.12:8081");
        try (FileMetaStorage meta = FileMetaStorage.open(root.resolve("layout-2"))) {
            int warmUp = Math.min(100, writes);
            for (int i = -warmUp; i < writes; i++) {
                long term = i + warmUp + 1L;
                byte[] record = RaftMetaRecord.newBuilder().setFormatVersion(1).setTerm(term)
                        .setVotedFor(vote.toString()).build().toByteArray();
                long t0 = System.nanoTime();
                DurableFiles.writeAtomically(oldFile, FileMetaStorage.MAGIC, record);
                long t1 = System.nanoTime();
                meta.setTermAndVote(term, vote);
                long t2 = System.nanoTime();
                if (i >= 0) {
                    oldNanos[i] = t1 - t0;
                    newNanos[i] = t2 - t1;
                }
            }
        }
        System.out.printf("meta write, %d writes per path, interleaved, dir %s%n", writes, root);
        System.out.printf("load average before: %s; after: %s%n", loadBefore, loadAverage());
        System.out.println("| path | p50 | p90 | p99 | max |");
        System.out.println("|---|---:|---:|---:|---:|");
        row("layout 1: temp + fsync + rename + dir fsync", oldNanos);
        row("layout 2: one slot + fdatasync", newNanos);
        deleteRecursively(root);
    }

    private static void row(String name, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        System.out.printf("| %s | %s | %s | %s | %s |%n", name, us(s, 0.50), us(s, 0.90), us(s, 0.99), us(s, 1.0));
    }

    private static String us(long[] sorted, double q) {
        int i = Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1);
        return String.format("%,d us", sorted[Math.max(0, i)] / 1_000);
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
