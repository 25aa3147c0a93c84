package io.wheelraft.core.spi;

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

import java.util.concurrent.CompletableFuture;

/**
 * The receiving side of a node: the transport calls these for requests addressed to it. Methods
 * return at once (they only post to the node's lane); the future completes with the answer.
 * A handler never throws for a well-formed request; a future completed exceptionally with an
 * {@link IllegalArgumentException} means the request was malformed.
 */
public interface RaftRequestHandler {

    CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest request);

    CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request);

    CompletableFuture<InstallSnapshotResponse> handleInstallSnapshot(InstallSnapshotRequest request);

    CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request);

    CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest request);
}
