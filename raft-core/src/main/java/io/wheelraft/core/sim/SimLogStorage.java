package io.wheelraft.core.sim;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.LogStorage;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.proto.LogEntry;

import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * A simulated member's log: a {@link MemoryLogStorage} (kept across crashes, with its write
 * faults) plus the faults a real disk has that the memory store cannot show by itself. An entry
 * can go bad ({@link #corrupt}: reading it fails, as a corrupt block of an SST does); a restart
 * can find the log damaged and drop its tail ({@link #loseTailAtRestart}, as a WAL whose synced
 * records fail their checksum); the storage can fail outside any call ({@link #failInBackground},
 * as a RocksDB background error). The node runs on it through the SPI only.
 *
 * <p>Threading: like the store it wraps; the fault controls are for the simulation thread.
 */
public final class SimLogStorage implements LogStorage {

    private final MemoryLogStorage disk;
    private final TreeSet<Long> corrupt = new TreeSet<>();
    private long keepAtRestart = -1;
    private volatile String damageAtOpen;
    private volatile Consumer<StorageException> backgroundListener;

    public SimLogStorage(MemoryLogStorage disk) {
        this.disk = disk;
    }

    /** The store underneath (its {@code faults()} fail writes). */
    public MemoryLogStorage disk() {
        return disk;
    }

    /** From now on reading entry {@code index} fails with a checksum error, until a restart that detects it. */
    public synchronized void corrupt(long index) {
        corrupt.add(index);
    }

    /**
     * At the next restart the log keeps only its entries up to {@code keepThrough} (synced writes
     * lost) and reports it as damage found at open.
     */
    public synchronized void loseTailAtRestart(long keepThrough) {
        keepAtRestart = keepAtRestart < 0 ? keepThrough : Math.min(keepAtRestart, keepThrough);
    }

    /** Tells the node, as a background failure would, that the storage can no longer write. */
    public void failInBackground(StorageException failure) {
        Consumer<StorageException> l = backgroundListener;
        if (l != null) {
            l.accept(failure);
        }
    }

    /**
     * The member restarts on this storage: a tail loss armed with {@link #loseTailAtRestart} takes
     * effect, and with {@code detectCorruption} (a verifying open, or the operator's repair) the log
     * is also cut before its first corrupt entry. Either is reported by {@link #damageFoundAtOpen}.
     */
    public synchronized void restart(boolean detectCorruption) {
        damageAtOpen = null;
        backgroundListener = null;
        long keep = keepAtRestart;
        if (detectCorruption && !corrupt.isEmpty()) {
            long firstBad = corrupt.first();
            keep = keep < 0 ? firstBad - 1 : Math.min(keep, firstBad - 1);
            corrupt.clear();
        }
        keepAtRestart = -1;
        if (keep < 0 || keep >= disk.lastLogIndex()) {
            return;
        }
        long last = disk.lastLogIndex();
        long kept = Math.max(keep, disk.firstLogIndex() - 1);
        disk.truncateSuffix(kept);
        damageAtOpen = "simulated log damage: entries " + (kept + 1) + ".." + last + " failed their checksum and were dropped";
    }

    private void check(long index) {
        if (isCorrupt(index)) {
            throw new LogCorruptionException("simulated log: entry " + index + " failed its checksum (block checksum mismatch)");
        }
    }

    private synchronized boolean isCorrupt(long index) {
        return corrupt.contains(index);
    }

    @Override
    public long firstLogIndex() {
        return disk.firstLogIndex();
    }

    @Override
    public long lastLogIndex() {
        return disk.lastLogIndex();
    }

    @Override
    public LogEntry entry(long index) {
        check(index);
        return disk.entry(index);
    }

    @Override
    public long term(long index) {
        check(index);
        return disk.term(index);
    }

    @Override
    public void append(List<LogEntry> entries) {
        disk.append(entries);
    }

    @Override
    public void truncatePrefix(long firstIndexKept) {
        disk.truncatePrefix(firstIndexKept);
    }

    @Override
    public void truncateSuffix(long lastIndexKept) {
        disk.truncateSuffix(lastIndexKept);
    }

    @Override
    public void reset(long nextLogIndex) {
        disk.reset(nextLogIndex);
    }

    @Override
    public List<LogEntry> configurationEntries() {
        return disk.configurationEntries();
    }

    @Override
    public String damageFoundAtOpen() {
        return damageAtOpen;
    }

    @Override
    public void onAsyncFailure(Consumer<StorageException> listener) {
        backgroundListener = listener;
    }

    @Override
    public void close() {
        disk.close();
    }

    @Override
    public String toString() {
        return "Sim" + disk;
    }
}
