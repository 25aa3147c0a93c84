package io.wheelraft.storage;

/**
 * Settings of a {@link RocksDbStore}. Immutable; each {@code with...} method returns a copy.
 *
 * <p>The defaults suit a Raft write-ahead log: every append is synced before it returns, a
 * modest memtable absorbs bursts, and the block cache stays small because a Raft log is read
 * back mostly from the memtable (followers replicate recent entries) or sequentially once.
 */
public final class RocksDbStoreOptions {

    private final boolean sync;
    private final long writeBufferBytes;
    private final long blockCacheBytes;
    private final long maxTotalWalBytes;
    private final boolean verifyOnOpen;
    private final long presizedWalBytes;

    private RocksDbStoreOptions(boolean sync, long writeBufferBytes, long blockCacheBytes,
                                long maxTotalWalBytes, boolean verifyOnOpen, long presizedWalBytes) {
        this.sync = sync;
        this.writeBufferBytes = writeBufferBytes;
        this.blockCacheBytes = blockCacheBytes;
        this.maxTotalWalBytes = maxTotalWalBytes;
        this.verifyOnOpen = verifyOnOpen;
        this.presizedWalBytes = presizedWalBytes;
    }

    /** Defaults: sync on, 64 MiB memtable for the log, 8 MiB shared block cache, 96 MiB WAL cap, verify on open, 64 MiB pre-sized WAL. */
    public static RocksDbStoreOptions defaults() {
        return new RocksDbStoreOptions(true, 64L << 20, 8L << 20, 96L << 20, true, 64L << 20);
    }

    /**
     * Whether each append (and every other mutation) waits for an fsync of the write-ahead log.
     * {@code false} is UNSAFE for Raft: an entry acknowledged to the leader can vanish on power
     * loss (it survives a process crash, as it sits in the OS page cache), which can lose
     * committed entries. Only for tests and benchmarks that measure something else.
     */
    public RocksDbStoreOptions withSync(boolean value) {
        return new RocksDbStoreOptions(value, writeBufferBytes, blockCacheBytes, maxTotalWalBytes, verifyOnOpen, presizedWalBytes);
    }

    /** Size of one memtable (RocksDB write_buffer_size) of the log column families. */
    public RocksDbStoreOptions withWriteBufferBytes(long value) {
        requirePositive(value, "writeBufferBytes");
        return new RocksDbStoreOptions(sync, value, blockCacheBytes, maxTotalWalBytes, verifyOnOpen, presizedWalBytes);
    }

    /** Capacity of the LRU block cache shared by every column family of the store. */
    public RocksDbStoreOptions withBlockCacheBytes(long value) {
        requirePositive(value, "blockCacheBytes");
        return new RocksDbStoreOptions(sync, writeBufferBytes, value, maxTotalWalBytes, verifyOnOpen, presizedWalBytes);
    }

    /** Total size of write-ahead log files after which RocksDB flushes memtables to free them. */
    public RocksDbStoreOptions withMaxTotalWalBytes(long value) {
        requirePositive(value, "maxTotalWalBytes");
        return new RocksDbStoreOptions(sync, writeBufferBytes, blockCacheBytes, value, verifyOnOpen, presizedWalBytes);
    }

    /**
     * Whether opening a store verifies the block checksums of its SST files, and opening a group's
     * log walks its entries to prove the indexes are contiguous and every entry's checksum holds.
     * On by default: damage found is cut off and reported (see {@code RocksDbLogStorage#damageFoundAtOpen}).
     */
    public RocksDbStoreOptions withVerifyOnOpen(boolean value) {
        return new RocksDbStoreOptions(sync, writeBufferBytes, blockCacheBytes, maxTotalWalBytes, value, presizedWalBytes);
    }

    /**
     * Size the live write-ahead log file is brought to at open, with obsolete WAL files recycled
     * from then on (RocksDB {@code recycle_log_file_num}), so a synced append overwrites an
     * existing file instead of growing it and {@code fdatasync} skips the inode write; see
     * {@code WalPresizer}. Costs one synced write of this many bytes at open (while the live WAL
     * is smaller) and up to three WAL files of disk space. {@code 0} turns both off: every WAL
     * file is new and grows.
     */
    public RocksDbStoreOptions withPresizedWalBytes(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("presizedWalBytes must be zero (off) or positive, got " + value);
        }
        return new RocksDbStoreOptions(sync, writeBufferBytes, blockCacheBytes, maxTotalWalBytes, verifyOnOpen, value);
    }

    public boolean sync() {
        return sync;
    }

    public long writeBufferBytes() {
        return writeBufferBytes;
    }

    public long blockCacheBytes() {
        return blockCacheBytes;
    }

    public long maxTotalWalBytes() {
        return maxTotalWalBytes;
    }

    public boolean verifyOnOpen() {
        return verifyOnOpen;
    }

    public long presizedWalBytes() {
        return presizedWalBytes;
    }

    private static void requirePositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    @Override
    public String toString() {
        return "RocksDbStoreOptions{sync=" + sync + ", writeBufferBytes=" + writeBufferBytes
                + ", blockCacheBytes=" + blockCacheBytes + ", maxTotalWalBytes=" + maxTotalWalBytes
                + ", verifyOnOpen=" + verifyOnOpen + ", presizedWalBytes=" + presizedWalBytes + '}';
    }
}
