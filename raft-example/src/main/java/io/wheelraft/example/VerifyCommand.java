package io.wheelraft.example;

import io.wheelraft.core.spi.LogCorruptionException;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbLogStorage;
import io.wheelraft.storage.RocksDbStore;
import io.wheelraft.storage.WalVerifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code verify}: checks a stopped node's data directory offline, changing nothing: the raft
 * meta (checksum, parse, repairing flag), the RocksDB write-ahead log (records recovery would
 * drop), the SST block checksums, every log entry's CRC32C and the contiguity of each group's
 * log, and the latest snapshot's meta and file checksums. One line per component, {@code ok ...}
 * or {@code DAMAGED ...} (or {@code REPAIRING ...}), then a summary line. Exit 0 only when all is
 * sound, 1 when something is damaged or unfinished, 2 on bad usage (including a running node).
 * Runs on the calling thread.
 */
@Command(name = "verify", description = "Check a stopped node's data directory offline; exit 0 only when all is sound.",
        mixinStandardHelpOptions = true)
final class VerifyCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--data", required = true, paramLabel = "DIR", description = "The data directory of a stopped node.")
    Path data;

    private int problems;
    private int checks;
    private PrintWriter out;

    @Override
    public Integer call() {
        Path dir = data.toAbsolutePath().normalize();
        Path logDir = dir.resolve("log");
        Path groupDir = dir.resolve(CounterServiceImpl.GROUP_ID);
        if (!Files.isDirectory(dir)) {
            throw CliException.usage("--data " + dir + " is not a directory");
        }
        if (!Files.exists(logDir.resolve("CURRENT")) && !Files.isDirectory(groupDir)) {
            throw CliException.usage("--data " + dir + " holds no node data (no log/ and no " + CounterServiceImpl.GROUP_ID + "/)");
        }
        if (RocksDbStore.isLockedByAnotherProcess(logDir)) {
            throw CliException.usage("the node using " + dir + " is running (the LOCK of " + logDir
                    + " is held); stop it before verifying its data");
        }
        out = spec.commandLine().getOut();
        boolean logHasEntries = verifyLog(logDir);
        verifyMeta(groupDir.resolve("meta"), logHasEntries);
        verifySnapshot(groupDir.resolve("snapshot"));
        if (problems == 0) {
            out.println("sound: " + checks + " checks of " + dir + " passed");
        } else {
            out.println("DAMAGED: " + problems + " of " + checks + " checks of " + dir
                    + " failed; see docs/storage.md for what the node does and how to repair it");
        }
        out.flush();
        return problems == 0 ? 0 : CliException.FAILED;
    }

    /** WAL, SST and entries; returns whether any group's log holds entries. */
    private boolean verifyLog(Path logDir) {
        if (!Files.exists(logDir.resolve("CURRENT"))) {
            ok("log " + logDir + ": no log store (a node that never started)");
            return false;
        }
        WalVerifier.Damage wal;
        try {
            wal = WalVerifier.verifyDirectory(logDir);
        } catch (StorageException e) {
            damaged("wal " + logDir + ": " + e.getMessage());
            return true;
        }
        if (wal == null) {
            ok("wal " + logDir + ": every write-ahead log file reads to a clean end");
        } else {
            damaged("wal " + wal.file() + " at byte " + wal.offset() + ": " + wal.reason()
                    + " (a start repairs it from the leader)");
        }
        RocksDbStore store;
        try {
            store = RocksDbStore.openReadOnly(logDir);
        } catch (LogCorruptionException e) {
            damaged("sst " + logDir + ": " + e.getMessage());
            return true;
        }
        boolean anyEntries = false;
        try (store) {
            try {
                int files = store.verifyChecksums();
                ok("sst " + logDir + ": block checksums of " + files + " SST files verified");
            } catch (LogCorruptionException e) {
                damaged("sst " + e.getMessage());
            }
            List<String> groups = store.groupIds();
            for (String group : groups) {
                try (RocksDbLogStorage log = store.logStorage(group)) {
                    long count = log.verifyAllEntries();
                    anyEntries |= count > 0;
                    ok("log group '" + group + "': " + (count == 0 ? "empty, next index " + log.firstLogIndex()
                            : "entries " + log.firstLogIndex() + ".." + log.lastLogIndex() + " contiguous, every checksum verified")
                            + (wal == null ? "" : " (as recovered: the records after the WAL damage are not counted)"));
                } catch (LogCorruptionException e) {
                    anyEntries = true;
                    damaged("log group '" + group + "': " + e.getMessage());
                }
            }
            if (groups.isEmpty()) {
                ok("log " + logDir + ": no group has written yet");
            }
        }
        return anyEntries;
    }

    private void verifyMeta(Path metaDir, boolean logHasEntries) {
        FileMetaStorage.OfflineView meta;
        try {
            meta = FileMetaStorage.readOffline(metaDir);
        } catch (StorageException e) { // LogCorruptionException included
            damaged("meta " + e.getMessage() + " (cannot be repaired in place: remove the peer, wipe, add it back)");
            return;
        }
        if (meta == null) {
            if (logHasEntries) {
                damaged("meta " + metaDir.resolve(FileMetaStorage.FILE_NAME) + " is missing while the log holds entries"
                        + " (the term and vote are lost: remove the peer, wipe, add it back)");
            } else {
                ok("meta " + metaDir.resolve(FileMetaStorage.FILE_NAME) + ": none yet (a fresh node)");
            }
            return;
        }
        ok("meta " + meta.file() + ": term=" + meta.term() + " vote=" + (meta.votedFor().isEmpty() ? "none" : meta.votedFor()));
        checks++;
        if (meta.repairing()) {
            problems++;
            out.println("REPAIRING meta " + meta.file() + ": the node is fenced until a leader repairs its log"
                    + " (it finishes by itself once started in its cluster)");
        } else {
            out.println("ok repairing: not set");
        }
    }

    private void verifySnapshot(Path snapshotDir) {
        LocalSnapshotStorage.OfflineCheck check;
        try {
            check = LocalSnapshotStorage.checkOffline(snapshotDir);
        } catch (StorageException e) {
            damaged("snapshot " + e.getMessage());
            return;
        }
        if (check.latest() == null) {
            ok("snapshot " + snapshotDir + ": none");
        } else if (check.damage() == null) {
            ok("snapshot " + check.latest() + ": index " + check.lastIncludedIndex() + ", meta and every file checksum verified");
        } else {
            damaged("snapshot " + check.damage() + " (a start sets it aside and repairs from the leader)");
        }
    }

    private void ok(String line) {
        checks++;
        out.println("ok " + line);
    }

    private void damaged(String line) {
        checks++;
        problems++;
        out.println("DAMAGED " + line);
    }
}
