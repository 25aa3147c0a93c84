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

    private RocksDbStoreOptions(boolean sync, long writeBufferBytes, long blockCacheBytes,
                                long maxTotalWalBytes, boolean verifyOnOpen) {
        this.sync = sync;
        this.writeBufferBytes = writeBufferBytes;
        this.blockCacheBytes = blockCacheBytes;
        this.maxTotalWalBytes = maxTotalWalBytes;
        this.verifyOnOpen = verifyOnOpen;
    }

    /** Defaults: sync on, 64 MiB memtable for the log, 8 MiB shared block cache, 256 MiB WAL cap, verify on open. */
    public static RocksDbStoreOptions defaults() {
        return new RocksDbStoreOptions(true, 64L << 20, 8L << 20, 256L << 20, true);
    }

    /**
     * Whether each append (and every other mutation) waits for an fsync of the write-ahead log.
     * {@code false} is UNSAFE for Raft: an entry acknowledged to the leader can vanish on power
     * loss (it survives a process crash, as it sits in the OS page cache), which can lose
     * committed entries. Only for tests and benchmarks that measure something else.
     */
    public RocksDbStoreOptions withSync(boolean value) {
        return new RocksDbStoreOptions(value, writeBufferBytes, blockCacheBytes, maxTotalWalBytes, verifyOnOpen);
    }

    /** Size of one memtable (RocksDB write_buffer_size) of the log column families. */
    public RocksDbStoreOptions withWriteBufferBytes(long value) {
        requirePositive(value, "writeBufferBytes");
        return new RocksDbStoreOptions(sync, value, blockCacheBytes, maxTotalWalBytes, verifyOnOpen);
    }

    /** Capacity of the LRU block cache shared by every column family of the store. */
    public RocksDbStoreOptions withBlockCacheBytes(long value) {
        requirePositive(value, "blockCacheBytes");
        return new RocksDbStoreOptions(sync, writeBufferBytes, value, maxTotalWalBytes, verifyOnOpen);
    }

    /** Total size of write-ahead log files after which RocksDB flushes memtables to free them. */
    public RocksDbStoreOptions withMaxTotalWalBytes(long value) {
        requirePositive(value, "maxTotalWalBytes");
        return new RocksDbStoreOptions(sync, writeBufferBytes, blockCacheBytes, value, verifyOnOpen);
    }

    /**
     * Whether opening a group's log walks its keys to prove the indexes are contiguous and checks
     * the checksum of its last entry. On by default; a node then refuses to start on a gap.
     */
    public RocksDbStoreOptions withVerifyOnOpen(boolean value) {
        return new RocksDbStoreOptions(sync, writeBufferBytes, blockCacheBytes, maxTotalWalBytes, value);
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

    private static void requirePositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    @Override
    public String toString() {
        return "RocksDbStoreOptions{sync=" + sync + ", writeBufferBytes=" + writeBufferBytes
                + ", blockCacheBytes=" + blockCacheBytes + ", maxTotalWalBytes=" + maxTotalWalBytes
                + ", verifyOnOpen=" + verifyOnOpen + '}';
    }
}
