package io.wheelraft.storage;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.io.IOException;
import java.util.zip.CRC32C;

/**
 * Encodes a {@link LogEntry} into the value stored under its key, and verifies it on the way back.
 *
 * <p>Layout: {@code [format:1][crc32c:4][LogEntry protobuf]}. The checksum covers the entry's
 * index (8 bytes, big-endian) followed by the protobuf bytes, so a value that ends up under the
 * wrong key is caught as well as a flipped bit or a cut-off value. Stateless and thread-safe.
 */
final class EntryCodec {

    static final byte FORMAT = 1;
    static final int HEADER = 5;

    private EntryCodec() {
    }

    static byte[] encode(LogEntry entry) {
        int size = entry.getSerializedSize();
        byte[] out = new byte[HEADER + size];
        out[0] = FORMAT;
        CodedOutputStream coded = CodedOutputStream.newInstance(out, HEADER, size);
        try {
            entry.writeTo(coded);
            coded.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize log entry " + entry.getIndex() + " into its own size", e);
        }
        LogKeys.putInt(out, 1, checksum(entry.getIndex(), out, HEADER, size));
        return out;
    }

    /**
     * Decodes and verifies the value stored for {@code index}.
     *
     * @param where names the group and data directory for the error message
     * @throws LogCorruptionException on a truncated value, unknown format, checksum mismatch, or
     *                                an entry whose own index or type is wrong
     */
    static LogEntry decode(long index, byte[] value, String where) {
        if (value.length < HEADER) {
            throw corrupt(index, where, "value is truncated to " + value.length + " bytes (header needs " + HEADER + ")");
        }
        if (value[0] != FORMAT) {
            throw corrupt(index, where, "unknown entry format " + value[0] + " (this version reads format " + FORMAT + ")");
        }
        int stored = LogKeys.getInt(value, 1);
        int computed = checksum(index, value, HEADER, value.length - HEADER);
        if (stored != computed) {
            throw corrupt(index, where, String.format("checksum mismatch (stored crc32c %08x, computed %08x over %d bytes)",
                    stored, computed, value.length - HEADER));
        }
        LogEntry entry;
        try {
            entry = LogEntry.parser().parseFrom(value, HEADER, value.length - HEADER);
        } catch (InvalidProtocolBufferException e) {
            throw new LogCorruptionException("log entry " + index + " of " + where + " does not parse: " + e.getMessage(), e);
        }
        if (entry.getIndex() != index) {
            throw corrupt(index, where, "the stored entry says index " + entry.getIndex());
        }
        if (entry.getType() == EntryType.ENTRY_TYPE_UNKNOWN || entry.getType() == EntryType.UNRECOGNIZED) {
            throw corrupt(index, where, "entry type " + entry.getTypeValue() + " is not a known type");
        }
        return entry;
    }

    /** The term of a stored value, verifying it like {@link #decode}. */
    static long term(long index, byte[] value, String where) {
        return decode(index, value, where).getTerm();
    }

    private static int checksum(long index, byte[] buf, int off, int len) {
        CRC32C crc = new CRC32C();
        crc.update(LogKeys.longBytes(index));
        crc.update(buf, off, len);
        return (int) crc.getValue();
    }

    private static LogCorruptionException corrupt(long index, String where, String what) {
        return new LogCorruptionException("log entry " + index + " of " + where + " is corrupt: " + what);
    }
}
