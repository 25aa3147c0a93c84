package io.wheelraft.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientCalls;
import io.wheelraft.client.proto.ClientReply;
import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.Command;
import io.wheelraft.client.proto.LeaderReply;
import io.wheelraft.client.proto.LeaderRequest;
import io.wheelraft.client.proto.Outcome;
import io.wheelraft.client.proto.Query;
import io.wheelraft.client.proto.RaftClientServiceGrpc;
import io.wheelraft.client.proto.SessionCommand;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.rpc.LoopWrite;
import io.wheelraft.rpc.RaftChannels;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The server side of {@link RaftClient}: one gRPC service per process serving every group it
 * hosts. Register it once on the process's gRPC server, e.g.
 * {@code GrpcRaftTransport.builder().addNonBlockingService(service)}, then
 * {@link #addGroup} each group once its node has started.
 *
 * <p>A command is proposed with {@link Node#apply} as a {@link SessionCommand} stamped with this
 * leader's clock; the group's {@link ExactlyOnceStateMachine} applies it once and answers it.
 * A query is served per its consistency, whatever the node's {@code readOnlyOption}: linearizable
 * with {@link Node#readIndex(ReadOnlyOption, io.wheelraft.core.ReadIndexClosure)} and
 * {@link ReadOnlyOption#READ_INDEX} (a quorum round, on a leader or a follower), lease with
 * {@link ReadOnlyOption#LEASE} (only on the leader: no round while its lease is valid, a round
 * otherwise), or a stale read once {@code min_index} is applied.
 *
 * <p>Flow control: a stream reads its next message only while fewer than
 * {@code maxUnansweredPerStream} of its calls are unanswered, and answers wait while the client
 * does not read, so a slow server (or client) slows the other side instead of growing queues.
 *
 * <p>Threading: never blocks, so it may run on the transport's I/O threads; answers come from node
 * threads, serialized per stream.
 */
public final class RaftClientService extends RaftClientServiceGrpc.RaftClientServiceImplBase {

    private static final Logger LOG = LoggerFactory.getLogger(RaftClientService.class);

    /** Calls one stream may have unanswered before the service stops reading it. */
    public static final int DEFAULT_MAX_UNANSWERED_PER_STREAM = 8192;

    /** A served group; {@code stateMachine} is null on a witness, which has none. */
    private record Group(Node node, ExactlyOnceStateMachine stateMachine, boolean witness) {
        /** Registered as a witness, or marked one by its own configuration (it then holds no data to serve). */
        boolean servesAsWitness() {
            if (witness) {
                return true;
            }
            NodeStatus s = node.status();
            return s.configuration() != null && s.self() != null && s.configuration().isWitness(s.self());
        }
    }

    private final Map<String, Group> groups = new ConcurrentHashMap<>();
    private final int maxUnansweredPerStream;
    private final java.util.concurrent.atomic.LongAdder refusedBusy = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder streamsOpened = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder refusedAsWitness = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder leaderCalls = new java.util.concurrent.atomic.LongAdder();

    public RaftClientService() {
        this(DEFAULT_MAX_UNANSWERED_PER_STREAM);
    }

    public RaftClientService(int maxUnansweredPerStream) {
        if (maxUnansweredPerStream <= 0) {
            throw new IllegalArgumentException("maxUnansweredPerStream must be > 0, was " + maxUnansweredPerStream);
        }
        this.maxUnansweredPerStream = maxUnansweredPerStream;
    }

    /**
     * Serves {@code node}'s group; {@code stateMachine} must be the wrapper installed in the node's options.
     *
     * @throws IllegalStateException if the group is served already
     */
    public void addGroup(Node node, ExactlyOnceStateMachine stateMachine) {
        java.util.Objects.requireNonNull(stateMachine, "stateMachine (a witness is added with addWitnessGroup)");
        if (groups.putIfAbsent(node.groupId(), new Group(node, stateMachine, false)) != null) {
            throw new IllegalStateException("group " + node.groupId() + " is already served");
        }
    }

    /**
     * Serves {@code node}'s group on a witness: it holds no data, so every command and query is
     * answered {@code OUTCOME_WITNESS} with the leader it knows, and {@link RaftClient} then sends
     * it nothing more; its {@code Leader} answer says it is a witness.
     *
     * @throws IllegalStateException if the group is served already
     */
    public void addWitnessGroup(Node node) {
        if (groups.putIfAbsent(node.groupId(), new Group(node, null, true)) != null) {
            throw new IllegalStateException("group " + node.groupId() + " is already served");
        }
    }

    /** Stops serving a group (its calls are then answered NOT_LEADER, so clients go elsewhere). */
    public void removeGroup(String groupId) {
        groups.remove(groupId);
    }

    /** Client streams opened on this service so far. */
    public long streamsOpened() {
        return streamsOpened.sum();
    }

    /** Calls answered OUTCOME_WITNESS so far (this member is a witness of their group). */
    public long refusedAsWitness() {
        return refusedAsWitness.sum();
    }

    /** Calls refused BUSY so far (the node's queue was full). */
    public long refusedBusy() {
        return refusedBusy.sum();
    }

    /** {@code Leader} calls received so far, held ones included (diagnostics). */
    public long leaderCalls() {
        return leaderCalls.sum();
    }

    @Override
    public void leader(LeaderRequest request, StreamObserver<LeaderReply> out) {
        leaderCalls.increment();
        Group g = groups.get(request.getGroupId());
        if (g != null && request.getWaitMs() > 0) {
            new HeldLeaderAnswer(g.node(), request, out, s -> leaderReply(g, s)).start();
            return;
        }
        out.onNext(g == null ? LeaderReply.getDefaultInstance() : leaderReply(g, g.node().status()));
        out.onCompleted();
    }

    private static LeaderReply leaderReply(Group g, NodeStatus s) {
        LeaderReply.Builder reply = LeaderReply.newBuilder()
                .setTerm(s.term()).setLeader(s.leader() == null ? "" : s.leader().endpoint()).setWitness(g.servesAsWitness());
        if (s.configuration() != null) {
            for (PeerId w : s.configuration().witnesses()) {
                reply.addWitnesses(w.endpoint());
            }
        }
        return reply.build();
    }

    @Override
    public StreamObserver<ClientCalls> calls(StreamObserver<ClientReplies> out) {
        streamsOpened.increment();
        return new CallStream((ServerCallStreamObserver<ClientReplies>) out);
    }

    /** Serves one call; {@code answer} gets exactly one reply, from whichever thread decides it. */
    private void serve(ClientCall call, Consumer<ClientReply.Builder> answer) {
        Group g = groups.get(call.getGroupId());
        if (g == null) {
            // Not (yet) served here: a starting server registers its groups after binding its port.
            answer.accept(notLeader(null, "group '" + call.getGroupId() + "' is not served by this member"));
            return;
        }
        // The flag, not the configuration: this is every call's path, and a data replica never
        // turns into a witness (the core refuses that change).
        if (g.witness()) {
            refusedAsWitness.increment();
            PeerId leader = g.node().getLeaderId();
            answer.accept(reply(Outcome.OUTCOME_WITNESS).setLeaderHint(leader == null ? "" : leader.endpoint())
                    .setMessage("this member is a witness: it holds no data and serves no calls; "
                            + (leader == null ? "leader unknown" : "leader is " + leader.endpoint())));
            return;
        }
        switch (call.getBodyCase()) {
            case COMMAND -> propose(g, call.getCommand(), answer);
            case QUERY -> query(g, call.getQuery(), answer);
            default -> answer.accept(reply(Outcome.OUTCOME_REJECTED).setMessage("INVALID_ARGUMENT: a call carries neither a command nor a query"));
        }
    }

    private void propose(Group g, Command command, Consumer<ClientReply.Builder> answer) {
        if (command.getClientId().isEmpty() || command.getSequence() <= 0) {
            answer.accept(reply(Outcome.OUTCOME_REJECTED).setMessage("INVALID_ARGUMENT: a command needs a client id and a positive sequence"));
            return;
        }
        Node node = g.node();
        if (!node.isLeader()) {
            answer.accept(notLeader(node.getLeaderId(), null));
            return;
        }
        SessionCommand entry = SessionCommand.newBuilder().setFormatVersion(RetryTable.FORMAT_VERSION)
                .setClientId(command.getClientId()).setSequence(command.getSequence()).setFirstUnacked(command.getFirstUnacked())
                .setLeaderTimeMs(System.currentTimeMillis()).setPayload(command.getPayload()).build();
        node.apply(new Task(SessionCodec.encode(entry), new ProposalClosure() {
            @Override
            public void run(Status status) {
                answer.accept(commandAnswer(node, this, status));
            }
        }));
    }

    private ClientReply.Builder commandAnswer(Node node, ProposalClosure done, Status status) {
        if (status.isOk()) {
            if (done.kind == RetryTable.Kind.STALE) {
                return reply(Outcome.OUTCOME_UNKNOWN).setMessage("stale sequence: the client had already been answered for it");
            }
            // The retry table keeps this same array to answer retries, so it is never written again.
            return reply(Outcome.OUTCOME_OK).setResult(UnsafeByteOperations.unsafeWrap(done.result)).setIndex(done.index);
        }
        return switch (status.code()) {
            case NOT_LEADER -> notLeader(status.leaderHint() != null ? status.leaderHint() : node.getLeaderId(), status.message());
            case BUSY -> {
                refusedBusy.increment();
                yield reply(Outcome.OUTCOME_BUSY).setMessage("BUSY: " + status.message());
            }
            // Refused before the entry was appended: certainly not applied, and another attempt may pass.
            case TERM_MISMATCH, LEADER_TRANSFERRING -> notLeader(node.getLeaderId(), status.code() + ": " + status.message());
            case INVALID_ARGUMENT -> reply(Outcome.OUTCOME_REJECTED).setMessage(status.code() + ": " + status.message());
            default -> reply(Outcome.OUTCOME_UNKNOWN).setMessage(status.code() + ": " + status.message());
        };
    }

    private void query(Group g, Query query, Consumer<ClientReply.Builder> answer) {
        Node node = g.node();
        switch (query.getConsistency()) {
            case READ_CONSISTENCY_STALE -> {
                if (g.stateMachine().appliedIndex() < query.getMinIndex()) {
                    answer.accept(reply(Outcome.OUTCOME_BEHIND).setMessage("this member has applied up to " + g.stateMachine().appliedIndex()
                            + ", the read needs " + query.getMinIndex()));
                } else {
                    answer.accept(answerQuery(g, query));
                }
            }
            case READ_CONSISTENCY_LEASE -> {
                if (!node.isLeader()) {
                    answer.accept(notLeader(node.getLeaderId(), "a lease read is served by the leader only"));
                } else {
                    readIndex(g, query, ReadOnlyOption.LEASE, answer);
                }
            }
            default -> readIndex(g, query, ReadOnlyOption.READ_INDEX, answer);
        }
    }

    private void readIndex(Group g, Query query, ReadOnlyOption option, Consumer<ClientReply.Builder> answer) {
        Node node = g.node();
        node.readIndex(option, (status, readIndex) -> {
            if (status.isOk()) {
                answer.accept(answerQuery(g, query));
            } else if (status.code() == RaftError.NOT_LEADER || status.code() == RaftError.LEADERSHIP_LOST) {
                answer.accept(notLeader(status.leaderHint() != null ? status.leaderHint() : node.getLeaderId(), status.message()));
            } else {
                // A read changes nothing: whatever failed, another attempt (maybe elsewhere) is safe.
                answer.accept(notLeader(null, status.code() + ": " + status.message()));
            }
        });
    }

    private static ClientReply.Builder answerQuery(Group g, Query query) {
        try {
            // The index is that of the last entry the state machine saw (not the read index, which may
            // name a no-op entry it never sees), so a STALE read's min_index is always reachable.
            ExactlyOnceStateMachine.QueryAnswer a = g.stateMachine().query(query.getPayload().asReadOnlyByteBuffer());
            return reply(Outcome.OUTCOME_OK).setResult(ByteString.copyFrom(a.result())).setIndex(a.index());
        } catch (RuntimeException e) {
            return reply(Outcome.OUTCOME_REJECTED).setMessage("query failed: " + e);
        }
    }

    private static ClientReply.Builder reply(Outcome outcome) {
        return ClientReply.newBuilder().setOutcome(outcome);
    }

    private static ClientReply.Builder notLeader(PeerId leader, String why) {
        String m = leader == null ? "not the leader; leader unknown" : "not the leader; leader is " + leader.endpoint();
        return reply(Outcome.OUTCOME_NOT_LEADER).setLeaderHint(leader == null ? "" : leader.endpoint())
                .setMessage(why == null ? m : m + " (" + why + ")");
    }

    /**
     * One client's stream. Answers come from several threads, so they are gathered under this
     * object's lock; the answers of one apply batch leave in one message ({@link SendGathering#ANSWERS}),
     * with those of every other group applied before the stream's loop writes them, and none leave
     * while the client is not reading (they wait for {@code onReady}). Calls in flight when the
     * client goes away are applied or not as usual; their answers are dropped and the
     * client retries them with the same sequence.
     */
    private final class CallStream implements StreamObserver<ClientCalls>, SendGathering.Sender {
        private final ServerCallStreamObserver<ClientReplies> out;
        /** Guarded by this. */
        private ClientReplies.Builder ready = ClientReplies.newBuilder();
        private int unanswered;
        private boolean paused;
        private boolean halfClosed;
        private boolean closed;
        /**
         * Writes on the event loop this stream was opened on (gRPC serves a call where its connection
         * runs), or on the answering thread when the server is not on a WheelRaft transport's loops. Answers decided on other
         * threads (each group's apply batch) are written by a task there, so the answers of every
         * group that finishes before it runs leave in one message: writes spread over many groups
         * otherwise send one message per answer.
         */
        private final LoopWrite writer = new LoopWrite(RaftChannels.eventLoopOfCallingThread(), this::write);

        CallStream(ServerCallStreamObserver<ClientReplies> out) {
            this.out = out;
            out.disableAutoRequest();
            out.setOnReadyHandler(this::write);
            out.setOnCancelHandler(() -> {
                synchronized (this) {
                    closed = true;
                }
            });
            out.request(1);
        }

        @Override
        public void onNext(ClientCalls calls) {
            synchronized (this) {
                unanswered += calls.getCallsCount();
            }
            SendGathering.ANSWERS.gatherWhile(() -> {
                for (ClientCall call : calls.getCallsList()) {
                    long id = call.getCallId();
                    serve(call, r -> answer(r.setCallId(id).build()));
                }
            });
            boolean more;
            synchronized (this) {
                more = unanswered < maxUnansweredPerStream;
                paused = !more;
            }
            if (more) {
                out.request(1);
            }
        }

        private void answer(ClientReply reply) {
            synchronized (this) {
                if (closed) {
                    unanswered--;
                    return;
                }
                ready.addReplies(reply);
            }
            if (!SendGathering.ANSWERS.defer(this)) {
                flush();
            }
        }

        /** Writes the gathered answers from a task on the stream's loop, or now when there is none. */
        @Override
        public void flush() {
            writer.request();
        }

        private void write() {
            boolean resume = false;
            synchronized (this) {
                if (closed || ready.getRepliesCount() == 0 || !out.isReady()) {
                    return; // onReady calls again once the client reads
                }
                ClientReplies replies = ready.build();
                ready = ClientReplies.newBuilder();
                unanswered -= replies.getRepliesCount();
                try {
                    out.onNext(replies);
                } catch (RuntimeException e) {
                    closed = true;
                    LOG.debug("client answers could not be sent: {}", e.toString());
                    return;
                }
                if (paused && unanswered < maxUnansweredPerStream / 2) {
                    paused = false;
                    resume = true;
                }
                finishIfDone();
            }
            if (resume) {
                out.request(1);
            }
        }

        @Override
        public synchronized void onError(Throwable t) {
            closed = true;
        }

        @Override
        public synchronized void onCompleted() {
            halfClosed = true;
            finishIfDone();
        }

        private void finishIfDone() {
            if (halfClosed && unanswered == 0 && ready.getRepliesCount() == 0 && !closed) {
                closed = true;
                try {
                    out.onCompleted();
                } catch (RuntimeException e) {
                    LOG.debug("client stream could not be closed: {}", e.toString());
                }
            }
        }
    }
}
