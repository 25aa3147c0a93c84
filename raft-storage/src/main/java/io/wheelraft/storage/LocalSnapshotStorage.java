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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
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
    /** A snapshot that failed verification at open, kept as evidence. */
    static final String DAMAGED_PREFIX = "damaged_";

    private final Path dir;
    private final Map<Long, Integer> readersBySeq = new HashMap<>();
    private long latestSeq;
    private long nextTempId;
    private LocalSnapshotReceiver activeReceiver;
    private boolean closed;
    /** False while the directory does not exist yet ({@link #openLazily}); created with the first snapshot. */
    private boolean directoryExists;
    private volatile String damageFoundAtOpen;

    private LocalSnapshotStorage(Path dir, long latestSeq, boolean directoryExists) {
        this.dir = dir;
        this.latestSeq = latestSeq;
        this.directoryExists = directoryExists;
    }

    /**
     * Opens the snapshot storage in {@code dir} (created if missing), removing partial snapshots
     * left by a crash and complete ones superseded by a later valid snapshot. The latest snapshot's
     * meta and every file's size and CRC32C are verified; a damaged one is moved aside (renamed
     * {@code damaged_<seq>-<UTC time>}, never deleted), reported by {@link #damageFoundAtOpen()},
     * and the next older valid snapshot, if any, becomes the latest.
     */
    public static LocalSnapshotStorage open(Path dir) {
        if (dir == null) {
            throw new IllegalArgumentException("snapshot directory is required (got null)");
        }
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(absolute);
            return openExisting(absolute);
        } catch (IOException e) {
            throw new StorageException("cannot open snapshot storage in " + absolute + ": " + e, e);
        }
    }

    /**
     * Like {@link #open}, but a missing {@code dir} is not created until the first snapshot is
     * written or received (then with its missing parents, each made durable): opening a storage
     * that never held a snapshot costs one {@code stat} and writes nothing, which is what lets a
     * process host many thousands of groups that have not snapshotted yet.
     */
    public static LocalSnapshotStorage openLazily(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return openAbsent(dir);
        }
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            return openExisting(absolute);
        } catch (IOException e) {
            throw new StorageException("cannot open snapshot storage in " + absolute + ": " + e, e);
        }
    }

    /**
     * As {@link #openLazily}, for a directory the caller knows does not exist (it listed the parent
     * and found no such entry), without looking again: a process starting many groups lists its
     * data directory once instead of probing each group's.
     */
    public static LocalSnapshotStorage openAbsent(Path dir) {
        if (dir == null) {
            throw new IllegalArgumentException("snapshot directory is required (got null)");
        }
        return new LocalSnapshotStorage(dir.toAbsolutePath().normalize(), 0, false);
    }

    private static LocalSnapshotStorage openExisting(Path absolute) throws IOException {
        List<String> damage = new ArrayList<>();
        long latest = cleanUp(absolute, damage);
        LocalSnapshotStorage storage = new LocalSnapshotStorage(absolute, latest, true);
        if (!damage.isEmpty()) {
            storage.damageFoundAtOpen = String.join("; ", damage);
            LOG.error("Snapshot damage found at open of {}: {}", absolute, storage.damageFoundAtOpen);
        }
        return storage;
    }

    /**
     * Creates the storage directory on first use ({@link #openLazily}): each missing directory
     * from the nearest existing ancestor down, with that ancestor and each new directory fsynced,
     * so the directory a snapshot is published into is itself durable.
     */
    private void ensureDirectory() throws IOException {
        if (directoryExists) {
            return;
        }
        Path existing = dir;
        while (existing != null && !Files.isDirectory(existing)) {
            existing = existing.getParent();
        }
        Files.createDirectories(dir);
        for (Path d = dir; existing != null && !d.equals(existing); d = d.getParent()) {
            DurableFiles.fsyncDirectory(d.getParent());
        }
        directoryExists = true;
    }

    private static long cleanUp(Path dir, List<String> damage) throws IOException {
        List<Long> complete = new ArrayList<>();
        try (Stream<Path> children = Files.list(dir)) {
            for (Path child : children.toList()) {
                String name = child.getFileName().toString();
                if (name.startsWith(WRITING_PREFIX) || name.startsWith(RECEIVING_PREFIX)
                        || name.endsWith(DurableFiles.TEMP_SUFFIX)) {
                    LOG.info("Removing partial snapshot {} left by an earlier run", child);
                    SnapshotFiles.deleteRecursively(child);
                } else if (sequenceOf(name) > 0) {
                    complete.add(sequenceOf(name));
                }
            }
        }
        complete.sort(java.util.Comparator.reverseOrder());
        long latest = 0;
        for (long seq : complete) {
            Path snapshot = snapshotDir(dir, seq);
            if (latest == 0) {
                String problem = damageOf(snapshot);
                if (problem == null) {
                    latest = seq;
                    continue;
                }
                Path aside = dir.resolve(DAMAGED_PREFIX + seq + "-" + java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC)
                        .format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'")));
                DurableFiles.moveAtomically(snapshot, aside);
                damage.add(problem + "; moved it aside to " + aside);
            } else {
                LOG.info("Removing superseded snapshot {}", snapshot);
                SnapshotFiles.deleteRecursively(snapshot);
            }
        }
        DurableFiles.fsyncDirectory(dir);
        return latest;
    }

    /** Why the snapshot in {@code snapshot} cannot be used (meta or a file fails), or null when it verifies. */
    static String damageOf(Path snapshot) throws IOException {
        try {
            SnapshotMeta meta = SnapshotFiles.readMeta(snapshot);
            SnapshotFiles.checkFilesPresent(snapshot, meta);
            for (io.wheelraft.proto.SnapshotFile f : meta.getFilesList()) {
                io.wheelraft.proto.SnapshotFile found = SnapshotFiles.describe(f.getName(), SnapshotFiles.resolve(snapshot, f.getName()));
                if (found.getCrc32C() != f.getCrc32C()) {
                    return String.format("snapshot file %s fails its checksum (crc32c %08x, its meta says %08x)",
                            SnapshotFiles.resolve(snapshot, f.getName()), found.getCrc32C(), f.getCrc32C());
                }
            }
            return null;
        } catch (LogCorruptionException e) {
            return e.getMessage();
        }
    }

    /** What an offline check of a snapshot directory found: the latest snapshot (null if none) and its damage (null if sound). */
    public record OfflineCheck(Path latest, long lastIncludedIndex, String damage) {
    }

    /**
     * Checks the latest snapshot in {@code dir} (meta, file sizes and CRC32C) without changing
     * anything, for the {@code verify} command.
     */
    public static OfflineCheck checkOffline(Path dir) {
        Path absolute = dir.toAbsolutePath().normalize();
        if (!Files.isDirectory(absolute)) {
            return new OfflineCheck(null, 0, null);
        }
        try (Stream<Path> children = Files.list(absolute)) {
            long latest = children.mapToLong(c -> sequenceOf(c.getFileName().toString())).max().orElse(0);
            if (latest == 0) {
                return new OfflineCheck(null, 0, null);
            }
            Path snapshot = snapshotDir(absolute, latest);
            String damage = damageOf(snapshot);
            long index = damage == null ? SnapshotFiles.readMeta(snapshot).getLastIncludedIndex() : 0;
            return new OfflineCheck(snapshot, index, damage);
        } catch (IOException e) {
            throw new StorageException("cannot read snapshot storage " + absolute + ": " + e, e);
        }
    }

    /**
     * What this storage found damaged when it opened (see {@link #open(Path)}); null when the
     * latest snapshot verified.
     */
    @Override
    public String damageFoundAtOpen() {
        return damageFoundAtOpen;
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
            ensureDirectory();
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
            ensureDirectory();
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
        long seq = latestSeq + 1;
        Path target = snapshotDir(dir, seq);
        String step = "fsync the files of " + temp;
        try {
            SnapshotFiles.fsyncTree(temp);
            step = "write the meta of " + temp;
            SnapshotFiles.writeMeta(temp, meta);
            step = "rename " + temp + " to " + target;
            DurableFiles.moveAtomically(temp, target);
            step = "fsync the directory " + dir;
            DurableFiles.fsyncDirectory(dir);
        } catch (IOException e) {
            // Never retried: after a failed fsync the kernel may report success for data it dropped.
            throw new StorageException("cannot make the snapshot at index " + meta.getLastIncludedIndex() + " durable: " + step
                    + " failed: " + e, e);
        }
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
