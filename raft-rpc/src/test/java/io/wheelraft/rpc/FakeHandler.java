package io.wheelraft.rpc;

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

/** A handler that answers at once and records the AppendEntries it saw, in arrival order. */
class FakeHandler implements RaftRequestHandler {

    final List<AppendEntriesRequest> appends = new CopyOnWriteArrayList<>();
    volatile long term = 7;

    @Override
    public CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest request) {
        return CompletableFuture.completedFuture(RequestVoteResponse.newBuilder()
                .setTerm(term).setGranted(request.getTerm() >= term).setPreVote(request.getPreVote()).build());
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
        appends.add(request);
        return CompletableFuture.completedFuture(AppendEntriesResponse.newBuilder()
                .setTerm(term).setSuccess(true).setSequence(request.getSequence())
                .setLastLogIndex(request.getPrevLogIndex() + request.getEntriesCount()).build());
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> handleInstallSnapshot(InstallSnapshotRequest request) {
        return CompletableFuture.completedFuture(InstallSnapshotResponse.newBuilder().setTerm(term).setSuccess(true)
                .setFileName(request.getFileName()).setNextOffset(request.getOffset() + request.getData().size()).build());
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request) {
        return CompletableFuture.completedFuture(TimeoutNowResponse.newBuilder().setTerm(term).setSuccess(true).build());
    }

    @Override
    public CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest request) {
        return CompletableFuture.completedFuture(ReadIndexResponse.newBuilder().setSuccess(true).setIndex(42).build());
    }
}
