package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DiskFaultsTest {

    @TempDir
    Path dir;

    /** A recycled WAL as WheelRaft leaves it: records of log 12 first, then old records of log 7, then zeros. */
    private static byte[] recycledWal(int liveRecords, int oldRecords, int payload) {
        ByteBuffer b = ByteBuffer.allocate(256 * 1024).order(ByteOrder.LITTLE_ENDIAN);
        int block = 32 * 1024;
        for (int i = 0; i < liveRecords + oldRecords; i++) {
            // As RocksDB's log writer does: a record that does not fit is split into fragments
            // (first, middle, last); a block tail too short for a header is zero-filled.
            int remaining = payload;
            boolean first = true;
            while (remaining > 0) {
                int left = block - b.position() % block;
                if (left < 11) {
                    b.position(b.position() + left);
                    continue;
                }
                int fragment = Math.min(remaining, left - 11);
                int type = first ? (fragment == remaining ? 5 : 6) : (fragment == remaining ? 8 : 7);
                b.putInt(0xCAFEBABE); // checksum (not checked by the walker)
                b.putShort((short) fragment);
                b.put((byte) type);
                b.putInt(i < liveRecords ? 12 : 7);
                byte[] p = new byte[fragment];
                Arrays.fill(p, (byte) (i + 1));
                b.put(p);
                remaining -= fragment;
                first = false;
            }
        }
        return b.array();
    }

    @Test
    void theFlipLandsInsideALiveRecordPastTheHeaders() throws Exception {
        byte[] wal = recycledWal(400, 200, 300);
        DiskFaults.Region r = DiskFaults.liveRecords(ByteBuffer.wrap(wal), 12);
        assertEquals(11, r.firstPayload(), "the first payload follows the first 11-byte header");
        assertTrue(r.end() > 100_000 && r.end() < 140_000, "400 records of 311 bytes, plus a header per block boundary, end near 124 KB: " + r.end());
        assertTrue(r.middlePayload() > r.end() / 3 && r.middlePayload() < 2 * r.end() / 3, "the middle record: " + r);

        Path file = Files.createDirectories(dir.resolve("log")).resolve("000012.log");
        Files.write(file, wal);
        Files.write(dir.resolve("log").resolve("000009.log"), new byte[100]);
        DiskFaults.Flip flip = DiskFaults.corruptWal(dir.resolve("log"));
        assertEquals(file, flip.file(), "the live WAL is the newest");
        byte[] after = Files.readAllBytes(file);
        int changed = 0;
        for (int i = 0; i < wal.length; i++) {
            if (wal[i] != after[i]) {
                assertTrue(i >= flip.offset() && i < flip.offset() + 64, "changed byte outside the flip at " + i);
                assertTrue(i < r.end(), "changed a byte past the live records at " + i);
                changed++;
            }
        }
        assertEquals(64, changed);
        // The flip starts at a payload: the 11 bytes before it are a record header of log 12.
        int pos = (int) flip.offset();
        ByteBuffer header = ByteBuffer.wrap(wal, pos - 11, 11).order(ByteOrder.LITTLE_ENDIAN);
        header.position(pos - 11 + 6);
        assertTrue(header.get() >= 5);
        assertEquals(12, header.getInt());
    }

    @Test
    void oldRecordsOfARecycledFileAreNotLive() {
        byte[] wal = recycledWal(3, 50, 100);
        DiskFaults.Region r = DiskFaults.liveRecords(ByteBuffer.wrap(wal), 12);
        assertEquals(3 * 111, r.end(), "the live log ends where log 7's old records begin");
    }

    @Test
    void theLargestSstIsDamagedInItsMiddle() throws Exception {
        Path rocks = Files.createDirectories(dir.resolve("rocks"));
        Files.write(rocks.resolve("000010.sst"), new byte[4096]);
        Files.write(rocks.resolve("000011.sst"), new byte[40_000]);
        DiskFaults.Flip flip = DiskFaults.corruptLargestSst(rocks).orElseThrow();
        assertEquals("000011.sst", flip.file().getFileName().toString());
        assertEquals(20_000, flip.offset());
        byte[] after = Files.readAllBytes(flip.file());
        assertEquals(64, (int) java.util.stream.IntStream.range(0, after.length).filter(i -> after[i] != 0).count());
        assertTrue(DiskFaults.corruptLargestSst(Files.createDirectories(dir.resolve("empty"))).isEmpty());
    }
}
