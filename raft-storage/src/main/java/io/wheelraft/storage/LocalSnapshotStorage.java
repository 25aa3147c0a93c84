package io.wheelraft.storage;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.proto.SnapshotMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Snapshots as directories of local files. Layout of the storage directory:
 * <ul>
 *   <li>{@code snapshot_<seq>/}: a complete snapshot (its files plus {@value SnapshotFiles#META_FILE}
 *       with index, term, configuration and each file's size and CRC32C); the highest
 *       {@code seq} is the latest;</li>
 *   <li>{@code writing_<n>/}: a snapshot being saved by the state machine;</li>
 *   <li>{@code receiving_<index>_<term>/}: a snapshot being received from the leader.</li>
 * </ul>
 * A snapshot is published by fsyncing its files and meta, renaming its temporary directory to
 * {@code snapshot_<seq>} and fsyncing the parent; only then is the previous one deleted (or,
 * if a reader still has it open, when that reader closes). At start-up, temporary directories
 * are removed and complete snapshots older than the latest valid one are deleted.
 *
 * <p>Threading: the storage's own methods are synchronized and may be called from any thread; a
 * writer or receiver is used by one thread at a time; readers may be shared across threads.
 */
public final class LocalSnapshotStorage implements SnapshotStorage {

    private static final Logger LOG = LoggerFactory.getLogger(LocalSnapshotStorage.class);
    static final String SNAPSHOT_PREFIX = "snapshot_";
    static final String WRITING_PREFIX = "writing_";
    static final String RECEIVING_PREFIX = "receiving_";

    private final Path dir;
    private final Map<Long, Integer> readersBySeq = new HashMap<>();
    private long latestSeq;
    private long nextTempId;
    private LocalSnapshotReceiver activeReceiver;
    private boolean closed;

    private LocalSnapshotStorage(Path dir, long latestSeq) {
        this.dir = dir;
        this.latestSeq = latestSeq;
    }

    /**
     * Opens the snapshot storage in {@code dir} (created if missing), removing partial snapshots
     * left by a crash and complete ones superseded by a later valid snapshot.
     */
    public static LocalSnapshotStorage open(Path dir) {
        if (dir == null) {
            throw new IllegalArgumentException("snapshot directory is required (got null)");
        }
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(absolute);
            long latest = cleanUp(absolute);
            return new LocalSnapshotStorage(absolute, latest);
        } catch (IOException e) {
            throw new StorageException("cannot open snapshot storage in " + absolute + ": " + e, e);
        }
    }

    private static long cleanUp(Path dir) throws IOException {
        long latest = 0;
        try (Stream<Path> children = Files.list(dir)) {
            for (Path child : children.toList()) {
                String name = child.getFileName().toString();
                if (name.startsWith(WRITING_PREFIX) || name.startsWith(RECEIVING_PREFIX)
                        || name.endsWith(DurableFiles.TEMP_SUFFIX)) {
                    LOG.info("Removing partial snapshot {} left by an earlier run", child);
                    SnapshotFiles.deleteRecursively(child);
                } else {
                    long seq = sequenceOf(name);
                    latest = Math.max(latest, seq);
                }
            }
        }
        if (latest > 0) {
            try {
                SnapshotFiles.readMeta(snapshotDir(dir, latest));
            } catch (LogCorruptionException e) {
                // Keep everything as evidence; open() reports the damage.
                return latest;
            }
            try (Stream<Path> children = Files.list(dir)) {
                for (Path child : children.toList()) {
                    long seq = sequenceOf(child.getFileName().toString());
                    if (seq > 0 && seq < latest) {
                        LOG.info("Removing superseded snapshot {}", child);
                        SnapshotFiles.deleteRecursively(child);
                    }
                }
            }
            DurableFiles.fsyncDirectory(dir);
        }
        return latest;
    }

    private static long sequenceOf(String dirName) {
        if (!dirName.startsWith(SNAPSHOT_PREFIX)) {
            return 0;
        }
        try {
            return Long.parseLong(dirName.substring(SNAPSHOT_PREFIX.length()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Path snapshotDir(Path dir, long seq) {
        return dir.resolve(String.format("%s%020d", SNAPSHOT_PREFIX, seq));
    }

    @Override
    public synchronized SnapshotWriter create() {
        checkOpen();
        Path temp = dir.resolve(WRITING_PREFIX + (++nextTempId));
        try {
            SnapshotFiles.deleteRecursively(temp);
            Files.createDirectories(temp);
        } catch (IOException e) {
            throw new StorageException("cannot create snapshot directory " + temp + ": " + e, e);
        }
        return new LocalSnapshotWriter(this, temp);
    }

    @Override
    public synchronized SnapshotReader open() {
        checkOpen();
        if (latestSeq == 0) {
            return null;
        }
        return openSeq(latestSeq);
    }

    private LocalSnapshotReader openSeq(long seq) {
        Path snapshot = snapshotDir(dir, seq);
        SnapshotMeta meta;
        try {
            meta = SnapshotFiles.readMeta(snapshot);
            SnapshotFiles.checkFilesPresent(snapshot, meta);
        } catch (IOException e) {
            throw new StorageException("cannot read snapshot " + snapshot + ": " + e, e);
        }
        readersBySeq.merge(seq, 1, Integer::sum);
        return new LocalSnapshotReader(this, seq, snapshot, meta);
    }

    @Override
    public synchronized SnapshotReceiver receive(SnapshotMeta meta) {
        checkOpen();
        if (meta == null) {
            throw new IllegalArgumentException("snapshot meta is required (got null)");
        }
        if (activeReceiver != null) {
            if (activeReceiver.meta().equals(meta) && activeReceiver.isActive()) {
                return activeReceiver; // resume where the interrupted transfer stopped
            }
            activeReceiver.abort();
        }
        Path temp = dir.resolve(RECEIVING_PREFIX + meta.getLastIncludedIndex() + "_" + meta.getLastIncludedTerm());
        try {
            SnapshotFiles.deleteRecursively(temp);
            Files.createDirectories(temp);
        } catch (IOException e) {
            throw new StorageException("cannot create snapshot directory " + temp + ": " + e, e);
        }
        activeReceiver = new LocalSnapshotReceiver(this, temp, meta);
        return activeReceiver;
    }

    /**
     * Makes the snapshot in {@code temp} durable and the latest: fsyncs its files, writes the meta,
     * renames the directory into place, fsyncs the parent, then deletes the previous snapshot.
     *
     * @return a reader of the new snapshot if {@code openReader}, else null
     */
    synchronized SnapshotReader publish(Path temp, SnapshotMeta meta, boolean openReader) throws IOException {
        checkOpen();
        SnapshotFiles.fsyncTree(temp);
        SnapshotFiles.writeMeta(temp, meta);
        long seq = latestSeq + 1;
        Path target = snapshotDir(dir, seq);
        DurableFiles.moveAtomically(temp, target);
        DurableFiles.fsyncDirectory(dir);
        long previous = latestSeq;
        latestSeq = seq;
        LOG.info("Snapshot at index {} term {} is durable in {}", meta.getLastIncludedIndex(), meta.getLastIncludedTerm(), target);
        if (previous > 0 && !readersBySeq.containsKey(previous)) {
            deleteQuietly(previous);
        }
        return openReader ? openSeq(seq) : null;
    }

    synchronized void receiverFinished(LocalSnapshotReceiver receiver) {
        if (activeReceiver == receiver) {
            activeReceiver = null;
        }
    }

    synchronized void readerClosed(long seq) {
        Integer left = readersBySeq.merge(seq, -1, Integer::sum);
        if (left != null && left <= 0) {
            readersBySeq.remove(seq);
            if (seq != latestSeq) {
                deleteQuietly(seq);
            }
        }
    }

    private void deleteQuietly(long seq) {
        Path old = snapshotDir(dir, seq);
        try {
            SnapshotFiles.deleteRecursively(old);
        } catch (IOException e) {
            // Harmless: start-up removes superseded snapshots again.
            LOG.warn("Could not delete superseded snapshot {}: {}", old, e.toString());
        }
    }

    /** The storage directory. */
    public Path directory() {
        return dir;
    }

    private void checkOpen() {
        if (closed) {
            throw new StorageException("snapshot storage in " + dir + " is closed");
        }
    }

    /** Stops accepting new work; open readers stay usable. Partial snapshots are removed at the next start-up. */
    @Override
    public synchronized void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "LocalSnapshotStorage{" + dir + ", latest=" + latestSeq + '}';
    }
}
