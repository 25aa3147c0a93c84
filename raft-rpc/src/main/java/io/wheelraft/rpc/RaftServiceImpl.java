package io.wheelraft.rpc;

import io.grpc.InternalStatus;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.StorageException;
import io.wheelraft.core.spi.TransportException;
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
import io.wheelraft.rpc.proto.PeerFrame;
import io.wheelraft.rpc.proto.PeerFrames;
import io.wheelraft.rpc.proto.PeerResult;
import io.wheelraft.rpc.proto.PeerResults;
import io.wheelraft.rpc.proto.RaftServiceGrpc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The server side of {@code RaftService}: checks each request, routes it by
 * {@code (group_id, peer_id)} to the registered node and relays the node's answer.
 *
 * <p>Runs on the connection's I/O thread (the server uses a direct executor for this service):
 * handlers only post to their node and return, so this never blocks, and the frames of one
 * peer stream reach their handlers in the order they were sent. (Separate unary calls carry no
 * such promise: HTTP/2 may deliver them in any order, which is why the transport sends its Raft
 * requests on {@code PeerStream}.) Answers are written from whichever thread completes the
 * handler's future; on the peer stream, many to a message, as the sender's requests are (the
 * answer to a timer heartbeat waits a few milliseconds for company, see {@link Coalescer}).
 *
 * <p>Unknown group or peer: NOT_FOUND; missing or malformed ids, or a handler reporting a
 * malformed request: INVALID_ARGUMENT; over the in-flight byte budget: RESOURCE_EXHAUSTED. None of
 * these is logged above debug, so a misdirected or hostile client cannot flood the log.
 */
final class RaftServiceImpl extends RaftServiceGrpc.RaftServiceImplBase {

    private static final Logger LOG = LoggerFactory.getLogger(RaftServiceImpl.class);
    /** Requests that reach a node whose storage failed: the same condition repeats per request. */
    private static final RateLimitedLog STORAGE_FAILURES = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final HandlerRegistry handlers;
    private final InboundConnectionTracker connections;
    private final InFlightBytes inFlight;
    private final ScheduledExecutorService scheduler;
    private final long heartbeatDelayMs;
    private final int maxBatchBytes;

    RaftServiceImpl(HandlerRegistry handlers, InboundConnectionTracker connections, InFlightBytes inFlight,
                    ScheduledExecutorService scheduler, long heartbeatDelayMs, int maxBatchBytes) {
        this.handlers = handlers;
        this.connections = connections;
        this.inFlight = inFlight;
        this.scheduler = scheduler;
        this.heartbeatDelayMs = heartbeatDelayMs;
        this.maxBatchBytes = maxBatchBytes;
    }

    @Override
    public void requestVote(RequestVoteRequest request, StreamObserver<RequestVoteResponse> out) {
        dispatch("RequestVote", request.getGroupId(), request.getPeerId(), request.getServerId(),
                request, request.getSerializedSize(), out, RaftRequestHandler::handleRequestVote);
    }

    @Override
    public void appendEntries(AppendEntriesRequest request, StreamObserver<AppendEntriesResponse> out) {
        dispatch("AppendEntries", request.getGroupId(), request.getPeerId(), request.getServerId(),
                request, request.getSerializedSize(), out, RaftRequestHandler::handleAppendEntries);
    }

    @Override
    public void installSnapshot(InstallSnapshotRequest request, StreamObserver<InstallSnapshotResponse> out) {
        dispatch("InstallSnapshot", request.getGroupId(), request.getPeerId(), request.getServerId(),
                request, request.getSerializedSize(), out, RaftRequestHandler::handleInstallSnapshot);
    }

    @Override
    public void timeoutNow(TimeoutNowRequest request, StreamObserver<TimeoutNowResponse> out) {
        dispatch("TimeoutNow", request.getGroupId(), request.getPeerId(), request.getServerId(),
                request, request.getSerializedSize(), out, RaftRequestHandler::handleTimeoutNow);
    }

    @Override
    public void readIndex(ReadIndexRequest request, StreamObserver<ReadIndexResponse> out) {
        dispatch("ReadIndex", request.getGroupId(), request.getPeerId(), request.getServerId(),
                request, request.getSerializedSize(), out, RaftRequestHandler::handleReadIndex);
    }

    @Override
    public StreamObserver<PeerFrames> peerStream(StreamObserver<PeerResults> out) {
        return new PeerStreamHandler(out);
    }

    private <Q, R> void dispatch(String op, String groupId, String peerId, String senderId, Q request, int size,
                                 StreamObserver<R> out, BiFunction<RaftRequestHandler, Q, CompletableFuture<R>> call) {
        if (out instanceof ServerCallStreamObserver<R> serverObserver) {
            // A caller that gave up (deadline) must not turn our late answer into an exception.
            serverObserver.setOnCancelHandler(() -> { });
        }
        route(op, groupId, peerId, senderId, request, size, call).whenComplete((response, error) -> {
            if (error != null) {
                reject(out, statusOf(error));
                return;
            }
            try {
                out.onNext(response);
                out.onCompleted();
            } catch (RuntimeException e) {
                LOG.debug("{} answer for group {} peer {} could not be sent: {}", op, groupId, peerId, e.toString());
            }
        });
    }

    /**
     * Checks a request and hands it to its node. The future fails with a {@link StatusRuntimeException}
     * for a request refused here, or with the handler's own error.
     */
    private <Q, R> CompletableFuture<R> route(String op, String groupId, String peerId, String senderId, Q request, int size,
                                              BiFunction<RaftRequestHandler, Q, CompletableFuture<R>> call) {
        String problem = checkIds(groupId, peerId, senderId);
        if (problem != null) {
            return refused(Status.INVALID_ARGUMENT.withDescription(op + ": " + problem));
        }
        RaftRequestHandler handler = handlers.find(groupId, peerId);
        if (handler == null) {
            return refused(Status.NOT_FOUND.withDescription(op + ": no node for group '" + groupId + "' peer '" + peerId + "' here"));
        }
        connections.noteSender(senderId);
        if (!inFlight.tryAcquire(size)) {
            return refused(Status.RESOURCE_EXHAUSTED.withDescription(op + ": " + inFlight.used()
                    + " bytes of requests already in flight on this server (limit " + inFlight.limit() + "); retry later"));
        }
        CompletableFuture<R> answer;
        try {
            answer = call.apply(handler, request);
            if (answer == null) {
                throw new IllegalStateException("handler returned no future");
            }
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.handle((response, error) -> {
            inFlight.release(size);
            if (error == null && response == null) {
                error = new IllegalStateException("handler completed with no response");
            }
            if (error != null) {
                throw new CompletionException(handlerFailure(op, groupId, peerId, error));
            }
            return response;
        });
    }

    /** Serves one peer stream: requests are routed in arrival order; answers go back as they complete, many to a message. */
    private final class PeerStreamHandler implements StreamObserver<PeerFrames> {
        private final StreamObserver<PeerResults> out;
        private final Coalescer<PeerResult> answers;
        private boolean finished;

        PeerStreamHandler(StreamObserver<PeerResults> out) {
            this.out = out;
            this.answers = new Coalescer<>(scheduler, heartbeatDelayMs, maxBatchBytes, PeerResult::getSerializedSize, this::send);
            // gRPC starts a call on the event loop of its connection, which also writes its answers.
            answers.sendOn(TransportEventLoops.currentLoop());
            if (out instanceof ServerCallStreamObserver<PeerResults> s) {
                s.setOnCancelHandler(() -> { });
            }
        }

        @Override
        public void onNext(PeerFrames frames) {
            for (PeerFrame frame : frames.getFramesList()) {
                serve(frame);
            }
        }

        private void serve(PeerFrame frame) {
            long callId = frame.getCallId();
            switch (frame.getRequestCase()) {
                case APPEND_ENTRIES -> {
                    AppendEntriesRequest r = frame.getAppendEntries();
                    relay(callId, PeerPipe.mayWait(r), route("AppendEntries", r.getGroupId(), r.getPeerId(), r.getServerId(), r,
                            r.getSerializedSize(), RaftRequestHandler::handleAppendEntries), PeerResult.Builder::setAppendEntries);
                }
                case REQUEST_VOTE -> {
                    RequestVoteRequest r = frame.getRequestVote();
                    relay(callId, false, route("RequestVote", r.getGroupId(), r.getPeerId(), r.getServerId(), r,
                            r.getSerializedSize(), RaftRequestHandler::handleRequestVote), PeerResult.Builder::setRequestVote);
                }
                case TIMEOUT_NOW -> {
                    TimeoutNowRequest r = frame.getTimeoutNow();
                    relay(callId, false, route("TimeoutNow", r.getGroupId(), r.getPeerId(), r.getServerId(), r,
                            r.getSerializedSize(), RaftRequestHandler::handleTimeoutNow), PeerResult.Builder::setTimeoutNow);
                }
                case READ_INDEX -> {
                    ReadIndexRequest r = frame.getReadIndex();
                    relay(callId, false, route("ReadIndex", r.getGroupId(), r.getPeerId(), r.getServerId(), r,
                            r.getSerializedSize(), RaftRequestHandler::handleReadIndex), PeerResult.Builder::setReadIndex);
                }
                case REQUEST_NOT_SET -> relay(callId, false, refused(Status.INVALID_ARGUMENT
                        .withDescription("peer frame " + callId + " carries no request (a newer sender?)")), (b, none) -> { });
            }
        }

        /** Queues the answer to frame {@code callId} once the node gives it: its response, or why there is none. */
        private <R> void relay(long callId, boolean mayWait, CompletableFuture<R> answer, BiConsumer<PeerResult.Builder, R> setResponse) {
            answer.whenComplete((response, error) -> {
                PeerResult.Builder r = PeerResult.newBuilder().setCallId(callId);
                if (error != null) {
                    Status status = statusOf(error);
                    r.setErrorCode(status.getCode().value()).setErrorMessage(String.valueOf(status.getDescription()));
                } else {
                    setResponse.accept(r, response);
                }
                answers.add(r.build(), !mayWait);
            });
        }

        /** Writes one batch of answers; the coalescer never calls this from two threads at once, but the stream's end may race it. */
        private synchronized void send(java.util.List<PeerResult> batch) {
            if (finished) {
                return;
            }
            try {
                out.onNext(PeerResults.newBuilder().addAllResults(batch).build());
            } catch (RuntimeException e) {
                finished = true;
                LOG.debug("peer stream answer could not be sent: {}", e.toString());
            }
        }

        @Override
        public synchronized void onError(Throwable t) {
            // The sender went away or reset the stream; connection loss is reported by the tracker.
            finished = true;
            answers.close();
        }

        @Override
        public synchronized void onCompleted() {
            answers.close();
            if (!finished) {
                finished = true;
                try {
                    out.onCompleted();
                } catch (RuntimeException e) {
                    LOG.debug("peer stream could not be closed: {}", e.toString());
                }
            }
        }
    }

    /** A refusal is an expected answer (a group not started here yet): no stack trace to fill in. */
    private static <R> CompletableFuture<R> refused(Status status) {
        LOG.debug("refusing request: {}", status);
        return CompletableFuture.failedFuture(InternalStatus.asRuntimeException(status, null, false));
    }

    private String checkIds(String groupId, String peerId, String senderId) {
        if (groupId.isEmpty()) {
            return "group_id is empty";
        }
        if (peerId.isEmpty()) {
            return "peer_id (the addressee) is empty";
        }
        if (senderId.isEmpty()) {
            return "server_id (the sender) is empty";
        }
        if (!connections.knowsSender(senderId)) {
            try {
                PeerId.parse(senderId);
            } catch (IllegalArgumentException e) {
                return "server_id is not a peer id: " + e.getMessage();
            }
        }
        return null;
    }

    /** The gRPC status a failed route ends with. */
    private static Status statusOf(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof StatusRuntimeException e) {
            return e.getStatus();
        }
        return Status.INTERNAL.withDescription(String.valueOf(cause));
    }

    private static StatusRuntimeException handlerFailure(String op, String groupId, String peerId, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof IllegalArgumentException) {
            return Status.INVALID_ARGUMENT.withDescription(op + " rejected by group '" + groupId + "' peer '" + peerId + "': "
                    + cause.getMessage()).asRuntimeException();
        }
        if (cause instanceof TransportException refusal) {
            // The node's own answer that it cannot take the request (it is stopping: NOT_FOUND or
            // CLOSED; a discarded acknowledgement: REJECTED). An expected state, not a fault: the
            // sender sees the same kind it would see from any transport, and nothing is logged.
            return statusOf(refusal.kind()).withDescription(op + " to group '" + groupId + "' peer '" + peerId + "': "
                    + refusal.getMessage()).asRuntimeException();
        }
        if (cause instanceof StorageException) {
            // The node's own disk failed (it stops itself and says why once): one line, never a
            // stack trace per incoming request, and no more than one every few seconds.
            STORAGE_FAILURES.warn(System.nanoTime() / 1_000_000, "{} to group {} peer {} refused: {}", op, groupId, peerId, cause.getMessage());
        } else {
            LOG.warn("{} handler of group {} peer {} failed", op, groupId, peerId, cause);
        }
        return Status.INTERNAL.withDescription(op + " failed in group '" + groupId + "' peer '" + peerId + "': " + cause).asRuntimeException();
    }

    /** The gRPC status that {@link TransportErrors} turns back into {@code kind} at the sender. */
    private static Status statusOf(TransportException.Kind kind) {
        return switch (kind) {
            case NOT_FOUND, CLOSED -> Status.NOT_FOUND; // the node is not (or no longer) running here
            case TIMEOUT -> Status.DEADLINE_EXCEEDED;
            case UNREACHABLE -> Status.UNAVAILABLE;
            case REJECTED -> Status.FAILED_PRECONDITION;
        };
    }

    private static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    private static void reject(StreamObserver<?> out, Status status) {
        try {
            out.onError(status.asRuntimeException());
        } catch (RuntimeException e) {
            LOG.debug("rejection could not be sent: {}", e.toString());
        }
    }
}
