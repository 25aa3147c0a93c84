package io.wheelraft.example;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Damages a stopped node's RocksDB files the way a bad disk does: 64 bytes flipped inside the
 * records of its live write-ahead log, or in the middle of its largest SST file. Stateless and
 * thread-safe (the node must be stopped: the files are changed in place).
 *
 * <p>Finding the live records: WheelRaft pre-sizes the WAL by recycling a padded file, so the live
 * {@code *.log} is 64 MiB long and only its beginning holds records of the current log; the rest
 * are old records (of another log number) or zeros. The records are read in RocksDB's format
 * (32 KiB blocks; a record header is checksum(4), length(2), type(1), plus the log number(4) for
 * recyclable types 5-8) from the start until the first record that is not of this log, and the
 * flip goes into the payload of the record found in the middle of them.
 */
final class DiskFaults {

    /** Bytes flipped per fault. */
    static final int FLIP_BYTES = 64;
    private static final int BLOCK = 32 * 1024;

    /** What was damaged, for the report. */
    record Flip(Path file, long offset, int bytes, String what) {
        String describe() {
            return String.format(Locale.ROOT, "%d bytes flipped at offset %,d of %s (%s)", bytes, offset, file.getFileName(), what);
        }
    }

    /** The byte range of a WAL file that holds records of the current log: [start, end). */
    record Region(long firstPayload, long end, long middlePayload) {
    }

    private DiskFaults() {
    }

    /** Flips {@link #FLIP_BYTES} bytes inside the records of the newest {@code *.log} in {@code rocksDir}. */
    static Flip corruptWal(Path rocksDir) throws IOException {
        Path wal = newest(rocksDir, ".log").orElseThrow(() -> new IOException("no write-ahead log (*.log) in " + rocksDir));
        long logNumber = logNumber(wal);
        Region r;
        try (RandomAccessFile f = new RandomAccessFile(wal.toFile(), "r")) {
            int n = (int) Math.min(f.length(), 64L << 20);
            byte[] bytes = new byte[n];
            f.readFully(bytes);
            r = liveRecords(ByteBuffer.wrap(bytes), logNumber);
        }
        if (r.end() - r.firstPayload() < FLIP_BYTES) {
            throw new IOException(wal + " holds fewer than " + FLIP_BYTES + " bytes of records of log " + logNumber);
        }
        long offset = Math.min(r.middlePayload(), r.end() - FLIP_BYTES);
        flip(wal, offset, FLIP_BYTES);
        return new Flip(wal, offset, FLIP_BYTES, String.format(Locale.ROOT, "inside the records of the live WAL, which end at %,d", r.end()));
    }

    /** Flips {@link #FLIP_BYTES} bytes in the middle of the largest {@code *.sst} in {@code rocksDir}; empty if there is none. */
    static Optional<Flip> corruptLargestSst(Path rocksDir) throws IOException {
        Optional<Path> sst;
        try (Stream<Path> s = Files.list(rocksDir)) {
            sst = s.filter(p -> p.getFileName().toString().endsWith(".sst")).max(Comparator.comparingLong(DiskFaults::size));
        }
        if (sst.isEmpty() || size(sst.get()) < 4L * FLIP_BYTES) {
            return Optional.empty();
        }
        long offset = size(sst.get()) / 2;
        flip(sst.get(), offset, FLIP_BYTES);
        return Optional.of(new Flip(sst.get(), offset, FLIP_BYTES, "the middle of the largest SST, " + size(sst.get()) + " bytes"));
    }

    /**
     * Walks RocksDB WAL records from the start of {@code wal} while they belong to {@code logNumber}
     * (or are legacy, non-recyclable records). Returns where the first payload starts, where the
     * live records end, and the payload start of the record in the middle of them.
     */
    static Region liveRecords(ByteBuffer wal, long logNumber) {
        ByteBuffer b = wal.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long pos = 0;
        long firstPayload = -1;
        long end = 0;
        java.util.List<Long> payloads = new java.util.ArrayList<>();
        int limit = b.limit();
        while (pos < limit) {
            long leftInBlock = BLOCK - pos % BLOCK;
            if (leftInBlock < 7 || (leftInBlock < 11 && b.get((int) pos + 6) == 0)) {
                pos += leftInBlock; // a block's tail too short for a (recyclable) header is zero padding
                continue;
            }
            if (pos + 7 > limit) {
                break;
            }
            int length = Short.toUnsignedInt(b.getShort((int) pos + 4));
            int type = Byte.toUnsignedInt(b.get((int) pos + 6));
            int header;
            if (type >= 1 && type <= 4) {
                header = 7;
            } else if (type >= 5 && type <= 8 && leftInBlock >= 11 && pos + 11 <= limit) {
                header = 11;
                long recordLog = Integer.toUnsignedLong(b.getInt((int) pos + 7));
                if (recordLog != (logNumber & 0xFFFFFFFFL)) {
                    break; // an old record of the recycled file: the live log ends here
                }
            } else {
                break; // zeros (type 0) or garbage: the end of what was written
            }
            if (header + length > leftInBlock || pos + header + length > limit) {
                break;
            }
            if (length > 0) {
                payloads.add(pos + header);
                if (firstPayload < 0) {
                    firstPayload = pos + header;
                }
            }
            pos += header + length;
            end = pos;
        }
        if (payloads.isEmpty()) {
            return new Region(0, 0, 0);
        }
        return new Region(firstPayload, end, payloads.get(payloads.size() / 2));
    }

    /** XORs {@code n} bytes at {@code offset} with 0xFF (every bit flipped) and forces them to disk. */
    static void flip(Path file, long offset, int n) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] buf = new byte[n];
            f.seek(offset);
            f.readFully(buf);
            for (int i = 0; i < n; i++) {
                buf[i] ^= (byte) 0xFF;
            }
            f.seek(offset);
            f.write(buf);
            f.getFD().sync();
        }
    }

    /** The newest file of {@code suffix} by RocksDB's file number (its name). */
    static Optional<Path> newest(Path dir, String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix) && p.getFileName().toString().matches("\\d+\\..*"))
                    .max(Comparator.comparingLong(DiskFaults::logNumber));
        }
    }

    static long logNumber(Path file) {
        String name = file.getFileName().toString();
        return Long.parseLong(name.substring(0, name.indexOf('.')));
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }
}
