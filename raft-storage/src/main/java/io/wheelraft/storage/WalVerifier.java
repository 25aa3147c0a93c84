package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Reads RocksDB's write-ahead log files ({@code NNNNNN.log}) record by record, without RocksDB and
 * without modifying them, and says whether records written in a file's current life were lost to
 * damage.
 *
 * <p>Why: RocksDB recovers the WAL with point-in-time recovery, which stops at the first record that
 * fails its checksum and silently drops everything after it, synced or not. Its stricter modes
 * cannot be used on recycled WAL files (which this store relies on, see {@link WalPresizer}): the
 * end of a recycled file's new data is followed by leftovers of its previous life, which look like
 * a bad record. This reader tells the two apart with what the recyclable record format carries:
 * every record of a file's current life holds the file's log number and a CRC32C over it.
 * <ul>
 *   <li>A record whose header carries this file's number but fails its checksum or length is
 *       damage: the writer wrote that header in this life.</li>
 *   <li>Anything else that does not read as a record (a leftover of an older life, zeros) ends the
 *       file's data, unless a valid record of this life is found anywhere after it: then the bytes
 *       in between were damaged (a flip that hit a header) and what follows was lost.</li>
 *   <li>Legacy (non-recyclable) files, written when WAL recycling is off, grow as they are written:
 *       a record cut short by the end of the file is a torn, never-synced tail (not damage); any
 *       other bad record is damage.</li>
 * </ul>
 * A record torn by power loss in the middle of a recycled file cannot be told apart from a damaged
 * last record, so it is reported as damage: the node is repaired from the leader, which costs a
 * catch-up but never a write. ({@code kill -9} tears nothing: written data sits in the page cache.)
 *
 * <p>Stateless and thread-safe.
 */
public final class WalVerifier {

    static final int BLOCK = 32 * 1024;
    private static final int LEGACY_HEADER = 7;
    private static final int RECYCLABLE_HEADER = 11;
    private static final int MASK_DELTA = 0xa282ead8;

    /** Where a WAL file was found damaged. */
    public record Damage(Path file, long offset, String reason) {
        /** One line: the file, the offset and what was wrong. */
        public String describe() {
            return "write-ahead log " + file + " is damaged at byte " + offset + ": " + reason;
        }
    }

    private WalVerifier() {
    }

    /**
     * Verifies every WAL file of the RocksDB directory {@code dir}, oldest first.
     *
     * @return the first damage found, or null when every file reads to a clean end
     * @throws StorageException if a file cannot be read
     */
    public static Damage verifyDirectory(Path dir) {
        List<Path> wals;
        try (Stream<Path> files = Files.list(dir)) {
            wals = files.filter(WalVerifier::isWal)
                    .sorted((a, b) -> Long.compare(number(a), number(b)))
                    .toList();
        } catch (IOException e) {
            throw new StorageException("cannot list the write-ahead log files in " + dir + ": " + e, e);
        }
        for (Path wal : wals) {
            Damage damage = verifyFile(wal);
            if (damage != null) {
                return damage;
            }
        }
        return null;
    }

    /** Verifies one WAL file; null when it reads to a clean end. */
    public static Damage verifyFile(Path wal) {
        byte[] data;
        try (FileChannel ch = FileChannel.open(wal, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE - 16) {
                throw new StorageException("write-ahead log " + wal + " is " + size + " bytes, too large to verify");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining() && ch.read(buf) >= 0) {
                // keep reading
            }
            data = buf.array();
        } catch (IOException e) {
            throw new StorageException("cannot read write-ahead log " + wal + ": " + e, e);
        }
        return verify(wal, data, (int) number(wal));
    }

    static Damage verify(Path wal, byte[] data, int logNumber) {
        ByteBuffer in = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        int pos = 0;
        boolean recycledFile = false;
        while (pos < data.length) {
            int blockLeft = BLOCK - pos % BLOCK;
            if (blockLeft < LEGACY_HEADER) {
                pos += blockLeft; // trailer of zeros
                continue;
            }
            if (data.length - pos < LEGACY_HEADER) {
                return null; // a header cut by the end of the file: torn, never synced
            }
            int storedCrc = in.getInt(pos);
            int length = Short.toUnsignedInt(in.getShort(pos + 4));
            int type = Byte.toUnsignedInt(data[pos + 6]);
            if (type == 0 && length == 0 && storedCrc == 0) {
                pos += blockLeft; // zero padding (a pre-allocated region or a block trailer)
                continue;
            }
            boolean recyclable = isRecyclable(type);
            int header = recyclable ? RECYCLABLE_HEADER : LEGACY_HEADER;
            boolean knownType = recyclable || isLegacy(type);
            if (!knownType || (recyclable && blockLeft < header) || (recycledFile && !recyclable)) {
                return endOrDamage(wal, data, pos, logNumber, "an unreadable record header (type " + type + ")");
            }
            if (recyclable) {
                recycledFile = true;
                if (data.length - pos < header) {
                    return null;
                }
                int recordLog = in.getInt(pos + 7);
                if (recordLog != logNumber) {
                    // A record of this file's previous life: RocksDB reads it as the end of the data.
                    return endOrDamage(wal, data, pos, logNumber, "a record of log " + Integer.toUnsignedString(recordLog)
                            + " where log " + logNumber + " continues");
                }
                if (length > blockLeft - header) {
                    return new Damage(wal, pos, "record length " + length + " runs past its 32 KiB block");
                }
                if (data.length - pos - header < length) {
                    return new Damage(wal, pos, "record of " + length + " bytes is cut short by the end of the file");
                }
                if (!crcMatches(data, pos, header, length, storedCrc)) {
                    return new Damage(wal, pos, "checksum mismatch in a record of this log");
                }
            } else {
                if (data.length - pos - header < length) {
                    return null; // legacy files grow: the last record was cut by the end, never synced
                }
                if (length > blockLeft - header || !crcMatches(data, pos, header, length, storedCrc)) {
                    return new Damage(wal, pos, "checksum mismatch");
                }
            }
            pos += header + length;
        }
        return null;
    }

    /**
     * At {@code badAt} the data stops reading as records of this log. That is the clean end of the
     * data unless a valid record of this log lies anywhere after it.
     */
    private static Damage endOrDamage(Path wal, byte[] data, int badAt, int logNumber, String what) {
        int next = nextValidRecord(data, badAt + 1, logNumber);
        if (next < 0) {
            return null;
        }
        return new Damage(wal, badAt, what + ", followed by valid records of this log from byte " + next
                + " that recovery would drop");
    }

    /** Offset of the first valid recyclable record of {@code logNumber} at or after {@code from}, or -1. */
    private static int nextValidRecord(byte[] data, int from, int logNumber) {
        ByteBuffer in = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        for (int pos = from; pos + RECYCLABLE_HEADER <= data.length; pos++) {
            if (in.getInt(pos + 7) != logNumber || !isRecyclable(Byte.toUnsignedInt(data[pos + 6]))) {
                continue;
            }
            int length = Short.toUnsignedInt(in.getShort(pos + 4));
            int blockLeft = BLOCK - pos % BLOCK;
            if (length > blockLeft - RECYCLABLE_HEADER || pos + RECYCLABLE_HEADER + length > data.length) {
                continue;
            }
            if (crcMatches(data, pos, RECYCLABLE_HEADER, length, in.getInt(pos))) {
                return pos;
            }
        }
        return -1;
    }

    /** RocksDB's record checksum: masked CRC32C over the type byte, the log number (if any) and the payload. */
    private static boolean crcMatches(byte[] data, int pos, int header, int length, int storedCrc) {
        CRC32C crc = new CRC32C();
        crc.update(data, pos + 6, 1);
        if (header == RECYCLABLE_HEADER) {
            crc.update(data, pos + 7, 4);
        }
        crc.update(data, pos + header, length);
        int c = (int) crc.getValue();
        int masked = ((c >>> 15) | (c << 17)) + MASK_DELTA;
        return masked == storedCrc;
    }

    private static boolean isLegacy(int type) {
        return (type >= 1 && type <= 4) || type == 9 || type == 10;
    }

    private static boolean isRecyclable(int type) {
        return (type >= 5 && type <= 8) || type == 11;
    }

    /** Whether {@code p} is one of RocksDB's WAL files ({@code NNNNNN.log}). */
    static boolean isWal(Path p) {
        return p.getFileName().toString().matches("\\d+\\.log");
    }

    /** The log number of a WAL file, from its name. */
    static long number(Path wal) {
        String name = wal.getFileName().toString();
        return Long.parseLong(name.substring(0, name.length() - ".log".length()));
    }
}
