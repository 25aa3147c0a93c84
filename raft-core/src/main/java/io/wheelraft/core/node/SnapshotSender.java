package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.SnapshotFile;
import io.wheelraft.proto.SnapshotMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Streams the leader's latest snapshot to one follower by InstallSnapshot, file by file in
 * chunks of at most {@code chunkBytes}, with one chunk in flight at a time (flow control: the
 * follower's answer releases the next). A lost or refused chunk is resent from the offset the
 * follower says it expects next, so a transfer resumes instead of restarting; after
 * {@link #MAX_FAILURES} failures in a row it gives up (the leader retries on a later heartbeat).
 *
 * <p>Runs on the node's snapshot lane (reads are disk I/O, kept off the Raft lane); it stops as
 * soon as {@code stillLeader} turns false. Reports exactly once through {@link Outcome}.
 */
final class SnapshotSender {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotSender.class);
    static final int MAX_FAILURES = 5;

    /** How a transfer ended: {@code ok}, or given up; {@code higherTerm} > 0 if the follower knew a newer term. */
    interface Outcome {
        void finished(PeerId peer, long snapshotIndex, boolean ok, long higherTerm);
    }

    private final String groupId;
    private final PeerId self;
    private final PeerId peer;
    private final long term;
    private final SnapshotStorage storage;
    private final RaftTransport transport;
    private final SerialLane lane;
    private final int chunkBytes;
    private final long timeoutMs;
    private final BooleanSupplier stillLeader;
    private final Outcome outcome;
    /** The peer is a witness: it gets the snapshot's metadata only (index, term, configuration; no files). */
    private final boolean metadataOnly;

    private SnapshotReader reader;
    private SnapshotMeta meta;
    private int fileIndex;
    private long offset;
    private int failures;
    private long chunksSent;
    private boolean finished;

    SnapshotSender(String groupId, PeerId self, PeerId peer, long term, SnapshotStorage storage, RaftTransport transport,
                   SerialLane lane, int chunkBytes, long timeoutMs, boolean metadataOnly, BooleanSupplier stillLeader, Outcome outcome) {
        this.groupId = groupId;
        this.self = self;
        this.peer = peer;
        this.term = term;
        this.storage = storage;
        this.transport = transport;
        this.lane = lane;
        this.chunkBytes = chunkBytes;
        this.timeoutMs = timeoutMs;
        this.stillLeader = stillLeader;
        this.outcome = outcome;
        this.metadataOnly = metadataOnly;
    }

    long term() {
        return term;
    }

    void start() {
        lane.execute(this::open);
    }

    private void open() {
        try {
            reader = storage.open();
        } catch (RuntimeException e) {
            LOG.error("{}/{}: cannot open the latest snapshot for {}", groupId, self, peer, e);
        }
        if (reader == null) {
            finish(false, 0, "no snapshot to send");
            return;
        }
        meta = metadataOnly ? reader.meta().toBuilder().clearFiles().build() : reader.meta();
        LOG.info("{}/{} sends its snapshot ending at {}/{} to {}{}", groupId, self, meta.getLastIncludedIndex(),
                meta.getLastIncludedTerm(), peer, metadataOnly ? " (a witness: metadata only)" : "");
        sendNext();
    }

    private void sendNext() {
        if (!stillLeader.getAsBoolean()) {
            finish(false, 0, "no longer leader of term " + term);
            return;
        }
        InstallSnapshotRequest request;
        try {
            request = nextChunk();
        } catch (IOException | RuntimeException e) {
            finish(false, 0, "reading the snapshot failed: " + e);
            return;
        }
        chunksSent++;
        transport.installSnapshot(peer, request, timeoutMs)
                .whenComplete((resp, err) -> lane.execute(() -> onAnswer(request, resp)));
    }

    private InstallSnapshotRequest nextChunk() throws IOException {
        InstallSnapshotRequest.Builder b = InstallSnapshotRequest.newBuilder().setGroupId(groupId)
                .setServerId(self.toString()).setPeerId(peer.toString()).setTerm(term).setMeta(meta);
        List<SnapshotFile> files = meta.getFilesList();
        if (files.isEmpty()) {
            return b.setDone(true).setLastChunkOfFile(true).build();
        }
        SnapshotFile f = files.get(fileIndex);
        ByteString data = offset >= f.getSize() ? ByteString.EMPTY : reader.readChunk(f.getName(), offset, chunkBytes);
        boolean lastOfFile = offset + data.size() >= f.getSize();
        return b.setFileName(f.getName()).setOffset(offset).setData(data).setLastChunkOfFile(lastOfFile)
                .setDone(lastOfFile && fileIndex == files.size() - 1).build();
    }

    private void onAnswer(InstallSnapshotRequest request, InstallSnapshotResponse resp) {
        if (finished) {
            return;
        }
        if (resp != null && resp.getTerm() > term) {
            finish(false, resp.getTerm(), peer + " is in term " + resp.getTerm());
            return;
        }
        if (resp != null && resp.getSuccess()) {
            failures = 0;
            if (request.getDone()) {
                finish(true, 0, "done");
                return;
            }
            offset += request.getData().size();
            if (request.getLastChunkOfFile()) {
                fileIndex++;
                offset = 0;
            }
            sendNext();
            return;
        }
        boolean resumeHint = resp != null && !resp.getFileName().isEmpty()
                && !(resp.getFileName().equals(request.getFileName()) && resp.getNextOffset() == request.getOffset());
        if (resumeHint && moveTo(resp.getFileName(), resp.getNextOffset())) {
            // The follower holds a different part (a chunk or its answer was lost): continue there.
            sendNext();
            return;
        }
        if (++failures >= MAX_FAILURES) {
            finish(false, 0, resp == null ? "no answer to " + MAX_FAILURES + " chunks in a row" : "refused: " + resp.getReason());
            return;
        }
        sendNext(); // resend the same chunk
    }

    private boolean moveTo(String fileName, long nextOffset) {
        List<SnapshotFile> files = meta.getFilesList();
        for (int i = 0; i < files.size(); i++) {
            if (files.get(i).getName().equals(fileName) && nextOffset <= files.get(i).getSize()) {
                fileIndex = i;
                offset = nextOffset;
                return true;
            }
        }
        return false;
    }

    private void finish(boolean ok, long higherTerm, String how) {
        if (finished) {
            return;
        }
        finished = true;
        long index = meta == null ? 0 : meta.getLastIncludedIndex();
        if (reader != null) {
            reader.close();
        }
        if (ok) {
            LOG.info("{}/{} installed its snapshot ending at {} on {} ({} chunks)", groupId, self, index, peer, chunksSent);
        } else {
            LOG.info("{}/{}: snapshot transfer to {} stopped after {} chunks: {}", groupId, self, peer, chunksSent, how);
        }
        outcome.finished(peer, index, ok, higherTerm);
    }
}
