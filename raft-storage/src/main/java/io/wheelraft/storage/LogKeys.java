package io.wheelraft.storage;

/**
 * Key layout of the log column families: a 4-byte group tag followed by the 8-byte entry index,
 * both big-endian, so RocksDB's byte order is index order within a group and each group's entries
 * form one contiguous key range (range deletes and seeks stay inside a group).
 */
final class LogKeys {

    /** Bytes of the group tag that starts every key. */
    static final int GROUP_TAG_LENGTH = 4;
    static final int KEY_LENGTH = GROUP_TAG_LENGTH + 8;

    private LogKeys() {
    }

    static byte[] key(int groupTag, long index) {
        byte[] k = new byte[KEY_LENGTH];
        putInt(k, 0, groupTag);
        putLong(k, 4, index);
        return k;
    }

    /** The smallest key of a group (index 0, never used by an entry). */
    static byte[] groupStart(int groupTag) {
        return key(groupTag, 0);
    }

    /** The largest key of a group. */
    static byte[] groupEnd(int groupTag) {
        return key(groupTag, -1L); // all ones: above every index, as keys compare unsigned
    }

    static boolean belongsTo(byte[] key, int groupTag) {
        return key.length == KEY_LENGTH && getInt(key, 0) == groupTag;
    }

    static long index(byte[] key) {
        return getLong(key, 4);
    }

    static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }

    static void putLong(byte[] b, int off, long v) {
        putInt(b, off, (int) (v >>> 32));
        putInt(b, off + 4, (int) v);
    }

    static int getInt(byte[] b, int off) {
        return ((b[off] & 0xff) << 24) | ((b[off + 1] & 0xff) << 16) | ((b[off + 2] & 0xff) << 8) | (b[off + 3] & 0xff);
    }

    static long getLong(byte[] b, int off) {
        return ((long) getInt(b, off) << 32) | (getInt(b, off + 4) & 0xffffffffL);
    }

    static byte[] longBytes(long v) {
        byte[] b = new byte[8];
        putLong(b, 0, v);
        return b;
    }
}
