package io.wheelraft.testkit.transport;

import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.AppendEntriesResponse;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import io.wheelraft.proto.TimeoutNowResponse;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A node stand-in for transport tests: records every request it receives, in arrival order, and
 * answers with its own {@code id} in the answer (as the term, or the read index), so a test sees
 * which node answered. {@link #failWith} makes it fail every request instead, {@link #neverAnswer}
 * leaves them unanswered. Thread-safe: transports call it from their own threads.
 */
public class RecordingHandler implements RaftRequestHandler {

    private final long id;
    private final List<Object> received = new CopyOnWriteArrayList<>();
    private volatile Throwable failure;
    private volatile boolean silent;

    public RecordingHandler(long id) {
        this.id = id;
    }

    /** The id this handler puts in its answers. */
    public long id() {
        return id;
    }

    /** Every request received, in arrival order. */
    public List<Object> received() {
        return received;
    }

    /** From now on every request fails with {@code error} (as a node refusing it would). */
    public RecordingHandler failWith(Throwable error) {
        this.failure = error;
        return this;
    }

    /** From now on requests are recorded and never answered (as a hung node). */
    public RecordingHandler neverAnswer() {
        this.silent = true;
        return this;
    }

    private <R> CompletableFuture<R> answer(Object request, R response) {
        received.add(request);
        if (silent) {
            return new CompletableFuture<>();
        }
        Throwable f = failure;
        return f != null ? CompletableFuture.failedFuture(f) : CompletableFuture.completedFuture(response);
    }

    @Override
    public CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest request) {
        return answer(request, RequestVoteResponse.newBuilder().setTerm(id).setGranted(true).setPreVote(request.getPreVote()).build());
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
        return answer(request, AppendEntriesResponse.newBuilder().setTerm(id).setSuccess(true).setSequence(request.getSequence())
                .setLastLogIndex(request.getPrevLogIndex() + request.getEntriesCount()).build());
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> handleInstallSnapshot(InstallSnapshotRequest request) {
        return answer(request, InstallSnapshotResponse.newBuilder().setTerm(id).setSuccess(true).setFileName(request.getFileName())
                .setNextOffset(request.getOffset() + request.getData().size()).build());
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request) {
        return answer(request, TimeoutNowResponse.newBuilder().setTerm(id).setSuccess(true).build());
    }

    @Override
    public CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest request) {
        return answer(request, ReadIndexResponse.newBuilder().setSuccess(true).setIndex(id).build());
    }
}
