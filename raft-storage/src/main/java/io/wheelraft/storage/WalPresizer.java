package io.wheelraft.storage;

import io.wheelraft.core.spi.StorageException;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Makes RocksDB's live write-ahead log a recycled file at least a given size, so that appending
 * to it does not grow it.
 *
 * <p>Why: a synced append to a file that grows changes the file's size, and {@code fdatasync}
 * must then write the inode as well as the data: on this project's reference disk (ext4, virtio)
 * that is a second synchronous device write per append, roughly 0.1 ms of every follower's
 * acknowledgement. With {@code recycle_log_file_num} RocksDB reuses obsolete WAL files and
 * overwrites them in place, but only after two memtable flushes, which a Raft log with a 64 MiB
 * memtable reaches after minutes or hours. This runs that cycle once at open instead, the way
 * etcd and PostgreSQL pre-size their WAL segments: a synced padding record of the wanted size
 * (WAL only: {@link WriteBatch#putLogData} reaches no memtable and no SST), then flushes that
 * retire the padded file into RocksDB's recycle list and switch the live WAL onto it.
 *
 * <p>Safety: recycled WAL records carry their log number, so recovery stops at the first record
 * left over from the file's previous use instead of replaying it (RocksDB's point-in-time recovery
 * mode, the default, which RocksDB keeps recycling enabled for). That mode also drops, silently,
 * every record after a damaged one; {@link WalVerifier} reads the WAL before RocksDB opens it to
 * report such damage. The padding and the marker key written here carry no log data.
 */
final class WalPresizer {

    /** Written to the default column family to give each flush a memtable to switch. */
    private static final byte[] MARKER_KEY = "wheelraft/wal_presize".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    private static final int CHUNK_BYTES = 1 << 20;
    /**
     * Flush rounds before giving up. The first retires the padded file, the second switches onto
     * it (always so in practice); RocksDB adds a retired file to its recycle list in the flush's
     * background clean-up, so a later round covers a clean-up that lags.
     */
    private static final int MAX_ROUNDS = 6;

    private WalPresizer() {
    }

    /**
     * Ensures the live WAL in {@code dir} is at least {@code bytes} long, doing nothing if it is.
     *
     * @return true if the live WAL reached the size (false: RocksDB did not recycle in time; the
     *         store works as before, appends just cost the inode write until the WAL rotates twice)
     */
    static boolean presize(RocksDB db, Path dir, List<ColumnFamilyHandle> families, long bytes) {
        if (liveWalBytes(dir) >= bytes) {
            return true;
        }
        try (WriteOptions synced = new WriteOptions().setSync(true);
             FlushOptions wait = new FlushOptions().setWaitForFlush(true)) {
            try (WriteBatch padding = new WriteBatch()) {
                byte[] chunk = new byte[CHUNK_BYTES];
                for (long written = 0; written < bytes; written += CHUNK_BYTES) {
                    padding.putLogData(chunk);
                }
                padding.put(MARKER_KEY, new byte[] {1});
                db.write(synced, padding);
            }
            for (int round = 0; round < MAX_ROUNDS; round++) {
                db.flush(wait, families); // retires the current WAL (every family is flushed past it)
                if (liveWalBytes(dir) >= bytes) {
                    db.delete(synced, MARKER_KEY);
                    return true;
                }
                db.put(synced, MARKER_KEY, new byte[] {(byte) round}); // a memtable for the next switch
            }
            db.delete(synced, MARKER_KEY);
            return liveWalBytes(dir) >= bytes;
        } catch (RocksDBException e) {
            throw new StorageException("cannot pre-size the write-ahead log in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Size of the newest (live) {@code NNNNNN.log} file in {@code dir}, 0 if there is none. */
    static long liveWalBytes(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            Optional<Path> newest = files
                    .filter(WalVerifier::isWal)
                    .max((a, b) -> Long.compare(WalVerifier.number(a), WalVerifier.number(b)));
            return newest.isPresent() ? Files.size(newest.get()) : 0;
        } catch (IOException e) {
            throw new StorageException("cannot list the write-ahead log files in " + dir + ": " + e, e);
        }
    }
}
