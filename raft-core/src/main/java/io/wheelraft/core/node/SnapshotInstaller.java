package io.wheelraft.core.node;

import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotReceiver;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.SnapshotMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The follower's side of InstallSnapshot: writes the leader's chunks into a
 * {@link SnapshotReceiver} (resuming one for the same snapshot, answering with the offset it
 * expects when a chunk does not fit), and when the last chunk arrives verifies and publishes the
 * snapshot, then hands it to the node to install. The leader checks (term, leader contact) are
 * done by the node on its Raft lane before a chunk gets here.
 *
 * <p>Runs on the node's snapshot lane (chunk writes are disk I/O, kept off the Raft lane).
 */
final class SnapshotInstaller {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotInstaller.class);

    private final String name;
    private final SnapshotStorage storage;
    private final SerialLane lane;
    private final Install install;
    private final java.util.function.Consumer<io.wheelraft.core.Status> storageFailed;
    /**
     * Whether the node has stopped or halted, and the failure its requests then get: chunks still
     * queued on the snapshot lane write and publish nothing. A halted node's storage is what the
     * next incarnation opens, and a snapshot the old one published behind its back (after the new
     * one had loaded an older snapshot) left that storage ahead of the node: it then refused every
     * older snapshot a leader sent ("would replace a newer snapshot"), and the follower never
     * caught up (RandomFaultSimulationTest, seeds 2745 and 2907 of 20,000).
     */
    private final BooleanSupplier halted;
    private final Supplier<TransportException> notRunning;

    /** Gets each complete, verified snapshot, with the answer to complete once it is installed and durable. */
    interface Install {
        void install(InstallSnapshotRequest lastChunk, SnapshotReader reader, CompletableFuture<InstallSnapshotResponse> answer);
    }

    private SnapshotMeta receivingMeta;
    private SnapshotReceiver receiver;

    /**
     * @param storageFailed told when the snapshot storage fails (not bad data from the leader): the node stops
     * @param halted        whether the node has stopped or halted (see {@link #halted})
     */
    SnapshotInstaller(String name, SnapshotStorage storage, SerialLane lane, Install install,
                      java.util.function.Consumer<io.wheelraft.core.Status> storageFailed, BooleanSupplier halted,
                      Supplier<TransportException> notRunning) {
        this.storageFailed = storageFailed;
        this.halted = halted;
        this.notRunning = notRunning;
        this.name = name;
        this.storage = storage;
        this.lane = lane;
        this.install = install;
    }

    /** Takes one chunk; {@code answer} completes with the reply for the leader ({@code term}: ours now). */
    void receive(InstallSnapshotRequest req, long term, CompletableFuture<InstallSnapshotResponse> answer) {
        lane.execute(() -> {
            try {
                onChunk(req, term, answer);
            } catch (io.wheelraft.core.spi.StorageException e) {
                if (!diskFault(e, "receiving snapshot chunk " + req.getFileName() + "@" + req.getOffset())) {
                    answer.complete(refuse(term, req, "chunk failed: " + e.getMessage()));
                } else {
                    answer.completeExceptionally(e);
                }
            } catch (RuntimeException e) {
                LOG.warn("{}: snapshot chunk {}@{} failed", name, req.getFileName(), req.getOffset(), e);
                answer.complete(refuse(term, req, "chunk failed: " + e));
            }
        });
    }

    private void onChunk(InstallSnapshotRequest req, long term, CompletableFuture<InstallSnapshotResponse> answer) {
        if (halted.getAsBoolean()) {
            answer.completeExceptionally(notRunning.get());
            return;
        }
        SnapshotMeta meta = req.getMeta();
        if (receiver == null || !meta.equals(receivingMeta)) {
            receiver = storage.receive(meta); // resumes one in progress for the same meta
            receivingMeta = meta;
        }
        String file = req.getFileName();
        if (!file.isEmpty()) {
            long expected = receiver.nextOffset(file);
            if (req.getOffset() != expected) {
                answer.complete(resume(term, file, expected, "chunk at offset " + req.getOffset() + " does not fit; expecting " + expected));
                return;
            }
            try {
                receiver.writeChunk(file, req.getOffset(), req.getData());
            } catch (java.io.IOException | RuntimeException e) {
                if (diskFault(e, "writing snapshot chunk " + file + "@" + req.getOffset())) {
                    answer.completeExceptionally(e);
                    return;
                }
                LOG.warn("{}: snapshot chunk {}@{} does not fit: {}", name, file, req.getOffset(), e.getMessage());
                answer.complete(resume(term, file, safeNextOffset(file), "writing the chunk failed: " + e));
                return;
            }
        }
        if (!req.getDone()) {
            answer.complete(InstallSnapshotResponse.newBuilder().setTerm(term).setSuccess(true).setFileName(file)
                    .setNextOffset(req.getOffset() + req.getData().size()).build());
            return;
        }
        SnapshotReceiver finished = receiver;
        receiver = null;
        receivingMeta = null;
        SnapshotReader reader;
        try {
            reader = finished.complete();
        } catch (java.io.IOException | RuntimeException e) {
            if (diskFault(e, "publishing the snapshot ending at " + meta.getLastIncludedIndex())) {
                answer.completeExceptionally(e);
                return;
            }
            LOG.warn("{}: the snapshot ending at {} failed verification; it will be sent again: {}", name, meta.getLastIncludedIndex(),
                    e.getMessage());
            finished.abort();
            String first = meta.getFilesCount() == 0 ? "" : meta.getFiles(0).getName();
            answer.complete(resume(term, first, 0, "snapshot verification failed: " + e));
            return;
        }
        install.install(req, reader, answer);
    }

    /**
     * Is {@code e} a fault of this node's disk (an I/O error, a full disk) rather than bad data
     * from the leader (a chunk or file failing its size or checksum: {@code LogCorruptionException},
     * which the leader fixes by sending again)? A disk fault stops the node.
     */
    private boolean diskFault(Exception e, String what) {
        if (e instanceof io.wheelraft.core.spi.LogCorruptionException || !(e instanceof java.io.IOException
                || e instanceof io.wheelraft.core.spi.StorageException)) {
            return false;
        }
        storageFailed.accept(io.wheelraft.core.Status.error(io.wheelraft.core.RaftError.STORAGE_ERROR, "%s failed: %s", what,
                SnapshotExecutor.message(e)));
        return true;
    }

    private long safeNextOffset(String file) {
        try {
            return receiver.nextOffset(file);
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static InstallSnapshotResponse resume(long term, String file, long nextOffset, String reason) {
        return InstallSnapshotResponse.newBuilder().setTerm(term).setSuccess(false).setFileName(file)
                .setNextOffset(nextOffset).setReason(reason).build();
    }

    static InstallSnapshotResponse installed(long term) {
        return InstallSnapshotResponse.newBuilder().setTerm(term).setSuccess(true).build();
    }

    static InstallSnapshotResponse refuse(long term, InstallSnapshotRequest req, String reason) {
        return InstallSnapshotResponse.newBuilder().setTerm(term).setSuccess(false).setReason(reason).build();
    }
}
