package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The byte layout of the two-slot meta file (layout version {@value #LAYOUT_VERSION}): a file of
 * exactly {@value #FILE_SIZE} bytes holding two slots, A at offset 0 and B at offset
 * {@value #SLOT_SIZE}. Each slot is
 * {@code [magic "WRM2"][layout version:4][sequence:8][length:4][payload][zero padding][crc32c:4]},
 * the CRC32C covering every byte of the slot before it (padding included). Encodes one slot and
 * picks the newest valid slot of a file read whole; the I/O is {@link FileMetaStorage}'s.
 *
 * <p>A slot is one 4 KiB page, aligned, so writing one slot never rewrites a device sector or a
 * page-cache page of the other one. A slot that is all zeros was never written (slot B of a new
 * file); a slot with a wrong magic or checksum is torn or damaged. A slot that passes its checksum
 * but has an unknown layout version or an impossible length is refused outright instead of being
 * skipped: it was written on purpose, perhaps by a newer build, and falling back to the other
 * slot would forget its vote. Stateless and thread-safe.
 */
final class MetaSlots {

    static final int SLOT_SIZE = 4096;
    static final int FILE_SIZE = 2 * SLOT_SIZE;
    static final int LAYOUT_VERSION = 2;
    static final byte[] MAGIC = "WRM2".getBytes(StandardCharsets.ISO_8859_1);
    private static final int HEADER = 4 + 4 + 8 + 4;
    private static final int CRC_OFFSET = SLOT_SIZE - 4;
    /** The largest record a slot holds; a term, a short peer id and a flag need well under 100 bytes. */
    static final int MAX_PAYLOAD = CRC_OFFSET - HEADER;

    private MetaSlots() {
    }

    /** A slot that passed every check. */
    record Slot(int index, long sequence, byte[] payload) {
    }

    static String name(int index) {
        return index == 0 ? "slot A" : "slot B";
    }

    static long offset(int index) {
        return (long) index * SLOT_SIZE;
    }

    /** One whole slot holding {@code payload}; the caller has checked it fits ({@link #MAX_PAYLOAD}). */
    static ByteBuffer encode(long sequence, byte[] payload) {
        if (payload.length > MAX_PAYLOAD) {
            throw new IllegalArgumentException("payload of " + payload.length + " bytes exceeds " + MAX_PAYLOAD);
        }
        ByteBuffer buf = ByteBuffer.allocate(SLOT_SIZE);
        buf.put(MAGIC).putInt(LAYOUT_VERSION).putLong(sequence).putInt(payload.length).put(payload);
        buf.putInt(CRC_OFFSET, crc(buf.array(), 0, CRC_OFFSET));
        buf.position(0).limit(SLOT_SIZE);
        return buf;
    }

    /** A whole new file: {@code payload} in slot A with sequence 1, slot B all zeros. */
    static ByteBuffer newFile(byte[] payload) {
        ByteBuffer file = ByteBuffer.allocate(FILE_SIZE);
        file.put(encode(1, payload)).position(0);
        return file;
    }

    /** True if {@code all} starts like a two-slot file (to word the error for a wrong size). */
    static boolean startsWithMagic(byte[] all) {
        if (all.length < MAGIC.length) {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (all[i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The valid slot with the highest sequence in {@code all} (a whole file of {@link #FILE_SIZE} bytes).
     *
     * @throws LogCorruptionException naming {@code file} and each slot's problem if neither slot is
     *                                valid, or if a slot passes its checksum but cannot be read
     */
    static Slot newest(Path file, byte[] all) {
        if (all.length != FILE_SIZE) {
            throw new IllegalArgumentException("expected " + FILE_SIZE + " bytes, got " + all.length);
        }
        Slot best = null;
        String[] problems = new String[2];
        for (int i = 0; i < 2; i++) {
            problems[i] = problem(file, all, i);
            if (problems[i] != null) {
                continue;
            }
            Slot s = read(all, i);
            if (best != null && best.sequence() == s.sequence()) {
                throw new LogCorruptionException("raft meta " + file + " has two valid slots with the same sequence "
                        + s.sequence() + "; a write always advances it, so the file was not written by this storage");
            }
            if (best == null || s.sequence() > best.sequence()) {
                best = s;
            }
        }
        if (best == null) {
            throw new LogCorruptionException("raft meta " + file + " holds no valid record (" + name(0) + ": " + problems[0]
                    + "; " + name(1) + ": " + problems[1] + "); it is never read as term 0, which could let this node vote"
                    + " twice in one term");
        }
        return best;
    }

    /**
     * Why the slot other than {@code chosen} is not usable, or null if it is valid or was never
     * written (a new file's slot B until the second write).
     */
    static String problemOfOther(Path file, byte[] all, int chosen) {
        String p = problem(file, all, 1 - chosen);
        return p == null || allZero(all, (1 - chosen) * SLOT_SIZE) ? null : p;
    }

    /** Why slot {@code index} is not usable, or null if it is valid. */
    private static String problem(Path file, byte[] all, int index) {
        int base = index * SLOT_SIZE;
        if (allZero(all, base)) {
            return "empty (all zeros)";
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (all[base + i] != MAGIC[i]) {
                return "bad magic (torn or damaged)";
            }
        }
        ByteBuffer slot = ByteBuffer.wrap(all, base, SLOT_SIZE).slice();
        int stored = slot.getInt(CRC_OFFSET);
        int computed = crc(all, base, CRC_OFFSET);
        if (stored != computed) {
            return String.format("fails its checksum (stored crc32c %08x, computed %08x; torn or damaged)", stored, computed);
        }
        int version = slot.getInt(4);
        if (version != LAYOUT_VERSION) {
            throw new LogCorruptionException("raft meta " + file + " " + name(index) + " has layout version " + version
                    + "; this build reads only version " + LAYOUT_VERSION + " (and converts version 1)");
        }
        int length = slot.getInt(16);
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new LogCorruptionException("raft meta " + file + " " + name(index) + " passes its checksum but declares "
                    + length + " payload bytes (at most " + MAX_PAYLOAD + ")");
        }
        return null;
    }

    private static Slot read(byte[] all, int index) {
        ByteBuffer slot = ByteBuffer.wrap(all, index * SLOT_SIZE, SLOT_SIZE).slice();
        long sequence = slot.getLong(8);
        byte[] payload = new byte[slot.getInt(16)];
        slot.position(HEADER);
        slot.get(payload);
        return new Slot(index, sequence, payload);
    }

    private static boolean allZero(byte[] all, int base) {
        for (int i = base; i < base + SLOT_SIZE; i++) {
            if (all[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static int crc(byte[] data, int from, int length) {
        CRC32C c = new CRC32C();
        c.update(data, from, length);
        return (int) c.getValue();
    }
}
