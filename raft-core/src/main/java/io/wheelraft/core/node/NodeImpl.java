package io.wheelraft.core.node;

import com.google.protobuf.ByteString;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.ReadIndexClosure;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Role;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.consensus.MembershipLog;
import io.wheelraft.core.consensus.RaftConfig;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.consensus.WitnessRules;
import io.wheelraft.core.consensus.RaftLog;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.RaftTransport;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The shell around {@link RaftCore}: one node of one group. It owns the node's timers, feeds
 * requests, answers, timer events and disk acknowledgements into the core on the node's Raft
 * lane, and after every such step carries out the {@link Ready} batch the core returns (persist,
 * send, apply) through a {@link ReadyCarrier}, whose one method holds the ordering rules. What
 * the network brings becomes core steps in {@link NetworkInbound}, timer firings in
 * {@link TimerSteps}. Which threads run the node's lanes is {@link LanePolicy}'s decision.
 * Public methods are thread-safe and only post work to the lane.
 */
public final class NodeImpl implements Node, RaftRequestHandler, ConnectionListener {

    private static final Logger LOG = LoggerFactory.getLogger(NodeImpl.class);

    private final String groupId;
    private final PeerId self;
    private final NodeOptions options;
    private final RaftTransport transport;
    private final NodeRuntime runtime;
    /** Which threads run this node's lanes. */
    private final LanePolicy lanes;
    private final SerialLane lane;
    private final Random random;
    private final ClosureQueue closures = new ClosureQueue();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final ProposalBuffer proposals;
    /** What committed entries are applied to: the user's state machine, or a witness's (see WitnessStateMachine). */
    private final StateMachine stateMachine;

    private RaftCore core;
    private NodeMetrics metrics;
    private LogWriter logWriter;
    private FsmCaller fsm;
    private NodeTimers timers;
    private SnapshotExecutor snapshots;
    private volatile NodeReads reads;
    private SnapshotIntake intake;
    /** Snapshot chunk reads and writes, off the Raft lane (they are disk I/O). */
    private SerialLane snapshotLane;
    private Outbox outbox;
    /** Carries out what the core decided, in Ready's order (see carryOut). */
    private ReadyCarrier carrier;

    /** Copies of lane-owned state, for status() and the timers (read from other threads). */
    private final NodeMirror mirror = new NodeMirror();
    /** Callers waiting for the term or leader to change ({@link #leaderChange}); set at start. */
    private volatile LeaderWatch leaderWatch;
    /** Turns peers' requests and answers and connection events into steps of the core. */
    private final NetworkInbound inbound;
    /** What the node's timers do when they fire. */
    private final TimerSteps timerSteps;
    /** Set when the node stops (shutdown, crash, fatal error): lane tasks become no-ops. */
    private volatile boolean halted;

    public NodeImpl(String groupId, PeerId self, NodeOptions options, RaftTransport transport, NodeRuntime runtime) {
        if (groupId == null || groupId.isBlank()) {
            throw new IllegalArgumentException("groupId must not be empty");
        }
        this.groupId = groupId;
        this.self = Objects.requireNonNull(self, "self peer id");
        this.options = Objects.requireNonNull(options, "options").validate();
        this.stateMachine = WitnessStateMachine.forNode(options);
        this.transport = Objects.requireNonNull(transport, "transport");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        if (options.timer() != null && options.timer() != runtime.timer()) {
            // The node reads the runtime's clock: timeouts on a wheel with another clock would not match it.
            throw new IllegalArgumentException("NodeOptions.timer must be the node runtime's timer (or null for it): "
                    + "the node reads the runtime's clock, so it must schedule on the runtime's wheel");
        }
        if (options.quiesceAfterMs() > 0 && !transport.reportsSilentPeers()) {
            throw new IllegalArgumentException("NodeOptions.quiesceAfterMs is " + options.quiesceAfterMs() + " but the transport "
                    + transport.getClass().getSimpleName() + " does not report silent peers: a quiet follower would never notice a "
                    + "cut-off leader; use a transport with a per-process liveness watch or set quiesceAfterMs to 0");
        }
        this.lanes = new LanePolicy(groupId + "/" + self, runtime, options);
        this.lane = lanes.raftLane(this::onLaneFailure);
        this.random = new Random(options.randomSeed());
        this.inbound = new NetworkInbound(this, options, lane, random, mirror);
        this.timerSteps = new TimerSteps(this, options, random, mirror);
        this.proposals = new ProposalBuffer(options.applyQueueCapacity(), lane, lane::executeHere,
                () -> mirror.commitIndex >= mirror.lastProposedIndex, transport::laterOnCallingThread, this::proposeBatch);
    }

    /**
     * Recovers from storage, then joins the group. Call once. The latest snapshot (if any) is
     * loaded into the state machine first and the log replays after it; if it cannot be loaded,
     * the node reports the error to {@code onError} and stays stopped (role ERROR), serving nothing.
     *
     * @throws IllegalStateException if the log has a gap after the snapshot (entries are missing)
     */
    public NodeImpl start() {
        metrics = NodeMetrics.of(options.nodeMetrics() ? options.meterRegistry() : null, groupId, self, this::status);
        var metaStorage = options.metaStorage();
        var logStorage = options.logStorage();
        String name = groupId + "/" + self;
        NodeRecovery.Recovered stored;
        try {
            stored = NodeRecovery.recover(name, options);
        } catch (NodeRecovery.CannotStart e) {
            return failStart(name, e.status());
        } catch (StorageException e) {
            return failStart(name, Status.error(RaftError.STORAGE_ERROR, "%s", e.getMessage()));
        }
        long snapIndex = stored.snapshotIndex();
        RaftLog log = stored.log();
        MembershipLog memberships = stored.memberships();
        String roleError = WitnessRules.roleError(options.witness(), self, memberships.current());
        if (roleError != null) {
            return failStart(name, Status.error(RaftError.INVALID_ARGUMENT, "%s", roleError));
        }
        long now = now();
        logWriter = new LogWriter(logStorage, lanes.diskLane(), new DiskListener(), lanes.sparseWriteClock(),
                lanes.appendsTogether(logStorage));
        fsm = new FsmCaller(stateMachine, logStorage, stored.recentEntries(), closures, lanes.applyLane(),
                lanes.applyOnCommittingThread(), snapIndex, stored.base().toEntry(),
                applied -> metrics.applied(applied, nanos()), error -> lane.execute(() -> enterError(error)));
        reads = new NodeReads(groupId, self, lane, transport, this::rpcTimeoutMs, new NodeReads.Wiring(() -> halted,
                () -> core.repairing() ? groupId + "/" + self + " is repairing its log after a storage fault and serves no reads" : null,
                () -> core.isLeader() || core.leader() == null, () -> core.leader(), (handles, lease) -> step(() -> core.readIndex(handles, lease, now()))), fsm);
        snapshotLane = lanes.snapshotLane();
        snapshots = new SnapshotExecutor(name, fsm, logStorage, options.snapshotStorage(), snapIndex, this::onSnapshotSaved,
                error -> lane.execute(() -> enterError(error)));
        outbox = new Outbox(self, transport, this::onLane, this::onLaneHere, inbound.peerAnswers(), rpcTimeoutMs(), this::voteTimeoutMs,
                (to, leaderTerm, stillLeader, done) -> new SnapshotSender(groupId, self, to, leaderTerm, options.snapshotStorage(),
                        transport, snapshotLane, options.snapshotChunkBytes(), rpcTimeoutMs(), core.membership().isWitness(to), stillLeader, done),
                leaderTerm -> !halted && mirror.role == Role.LEADER && mirror.term == leaderTerm,
                new VotePathWarmup(groupId, self, transport, baseVoteTimeoutMs(), this::handleRequestVote));
        core = new RaftCore(RaftConfig.from(groupId, self, options), log, metaStorage.term(),
                metaStorage.votedFor(), memberships, snapIndex, stored.repairing(), now);
        core.enableQuiescence(options.quiesceAfterMs(), options.quiesceUnservedAfterMs());
        core.shareCampaignSlots(options.campaignSlots());
        if (options.fastFirstElection()) {
            core.enableFastFirstElection(options.heartbeatIntervalMs(), now);
        }
        if (options.quiesceAfterMs() > 0) {
            // Two heartbeat intervals: an awake leader's heartbeat comes within one.
            core.enableRestartProbe(2L * options.heartbeatIntervalMs(), now);
        }
        intake = new SnapshotIntake(new SnapshotIntake.Parts(core, this::carryOutNow, this::now, this::onLaneOr, this::halted, this::notRunning, mirror,
                fsm, snapshots, logWriter), name, options.snapshotStorage(), snapshotLane, error -> lane.execute(() -> enterError(error)));
        // A background failure (a RocksDB flush on a full disk) means nothing more is durable.
        logStorage.onAsyncFailure(e -> lane.execute(() -> onLaneFailure(e)));
        mirror.lastLeaderContactMs = now;
        mirror.term = core.term();
        mirror.role = core.role();
        mirror.commitIndex = snapIndex;
        mirror.configuration = memberships.current().current();
        leaderWatch = new LeaderWatch(mirror.term, mirror.leader);
        timers = new NodeTimers(name, timer(), runtime.clock(), random, options.electionTimeoutMs(),
                options.heartbeatIntervalMs(), options.snapshotIntervalSecs(), () -> mirror.lastLeaderContactMs, core::electionBackoff, lane, timerSteps.events());
        carrier = new ReadyCarrier(new NodeSink(new NodeSink.Parts(name, options, runtime.clock(), mirror, metrics, fsm, closures,
                logWriter, outbox, timers, timerSteps::scheduleElectionRetry, timerSteps::scheduleWake, timerSteps::awaitCampaignSlot, leaderWatch)), lane, () -> halted);
        transport.register(groupId, self, this);
        transport.addConnectionListener(this);
        outbox.prepareConnections(memberships.current());
        lane.execute(() -> {
            timers.enter(core.role());
            if (options.snapshotIntervalSecs() > 0) {
                timers.snapshot.start();
            }
            carryOut(); // schedules the wake-up the core asked for at start (a fresh group's first campaign)
        });
        if (options.logRoleChanges()) {
            LOG.info("{} started: term {}, snapshot {}, log {}..{}, members {}", name, core.term(), snapIndex, log.firstIndex(),
                    log.lastIndex(), mirror.configuration);
        } else {
            RoleChangeTally.PROCESS.started(runtime.clock().millis());
            LOG.debug("{} started: term {}, snapshot {}, log {}..{}, members {}", name, core.term(), snapIndex, log.firstIndex(),
                    log.lastIndex(), mirror.configuration);
        }
        return this;
    }

    /** The snapshot could not be loaded at start: report it and stay stopped, never serving from a half-loaded state. */
    private NodeImpl failStart(String name, Status error) {
        LOG.error("{} cannot start: {}", name, error);
        halted = true;
        mirror.roleSince = Instant.now();
        mirror.role = Role.ERROR;
        mirror.configuration = options.initialConfiguration();
        try {
            stateMachine.onError(error);
        } catch (RuntimeException e) {
            LOG.error("{}: onError threw", name, e);
        }
        terminated.countDown();
        return this;
    }

    /** The wheel this node schedules on: its runtime's, whose clock {@link #now()} reads. */
    io.wheelraft.timer.Timer timer() {
        return runtime.timer();
    }

    long now() {
        return runtime.clock().millis();
    }

    private long nanos() {
        return runtime.clock().nanoTime();
    }

    /** Runs {@code action} on the lane unless the node has stopped. */
    void onLane(Runnable action) {
        lane.execute(() -> {
            if (!halted) {
                action.run();
            }
        });
    }

    /**
     * Like {@link #onLane}, but runs it on the calling thread when the lane is idle: for events
     * arriving on transport I/O threads and the disk lane, saving a thread wake-up on the
     * replication path.
     */
    private void onLaneHere(Runnable action) {
        lane.executeHere(() -> {
            if (!halted) {
                action.run();
            }
        });
    }

    // ------------------------------------------------------------------ Node API

    @Override
    public String groupId() {
        return groupId;
    }

    @Override
    public PeerId nodeId() {
        return self;
    }

    @Override
    public PeerId getLeaderId() {
        return mirror.leader;
    }

    @Override
    public boolean isLeader() {
        return mirror.role == Role.LEADER && !halted;
    }

    @Override
    public void apply(Task task) {
        Objects.requireNonNull(task, "task");
        if (halted) {
            complete(task.done(), Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is not running", groupId, self));
            return;
        }
        if (mirror.role != Role.LEADER) {
            complete(task.done(), Status.notLeader(mirror.leader));
            return;
        }
        if (!proposals.offer(task)) {
            complete(task.done(), Status.error(RaftError.BUSY, "apply queue of %s/%s is full (%d tasks); retry later",
                    groupId, self, options.applyQueueCapacity()));
        }
    }

    /** Runs on the lane: one batch of queued {@code apply} tasks becomes one proposal. */
    private void proposeBatch(List<Task> tasks) {
        if (halted) {
            tasks.forEach(t -> complete(t.done(), Status.error(RaftError.SHUTTING_DOWN, "node %s/%s stopped", groupId, self)));
            return;
        }
        if (!core.isLeader()) {
            Status s = Status.notLeader(core.leader());
            tasks.forEach(t -> complete(t.done(), s));
            return;
        }
        if (core.transferring()) {
            Status s = Status.error(RaftError.LEADER_TRANSFERRING, "leadership is being transferred; retry on the new leader");
            tasks.forEach(t -> complete(t.done(), s));
            return;
        }
        List<ByteString> data = new ArrayList<>(tasks.size());
        List<Closure> dones = new ArrayList<>(tasks.size());
        for (Task t : tasks) {
            if (t.expectedTerm() != -1 && t.expectedTerm() != core.term()) {
                complete(t.done(), Status.error(RaftError.TERM_MISMATCH, "task expects term %d but the leader is in term %d",
                        t.expectedTerm(), core.term()));
                continue;
            }
            data.add(ByteString.copyFrom(t.data().duplicate()));
            dones.add(t.done());
        }
        if (data.isEmpty()) {
            return;
        }
        long first = core.propose(data, now());
        mirror.lastProposedIndex = first + data.size() - 1;
        metrics.proposed(mirror.lastProposedIndex, nanos());
        for (int i = 0; i < dones.size(); i++) {
            closures.append(first + i, dones.get(i));
        }
        carryOut();
    }

    private static void complete(Closure done, Status status) {
        CallerCode.complete(done, status);
    }

    @Override
    public void readIndex(ReadIndexClosure done) {
        readIndex(options.readOnlyOption(), done);
    }

    @Override
    public void readIndex(ReadOnlyOption option, ReadIndexClosure done) {
        Objects.requireNonNull(option, "option");
        Objects.requireNonNull(done, "done");
        if (halted || reads == null) {
            done.run(Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is not running", groupId, self), -1);
            return;
        }
        if (options.witness()) { // it holds no data to read after the index, and it does not forward
            done.run(Status.error(RaftError.INVALID_ARGUMENT, "%s/%s is a witness: it holds no data and serves no reads; "
                    + "read from a data member (leader: %s)", groupId, self, mirror.leader), -1);
            return;
        }
        reads.submit(done, option);
    }

    @Override
    public void addPeer(PeerId peer, Closure done) {
        Objects.requireNonNull(peer, "peer");
        changeFrom(current -> MembershipTargets.withVoter(current, peer), done);
    }

    @Override
    public void removePeer(PeerId peer, Closure done) {
        Objects.requireNonNull(peer, "peer");
        changeFrom(current -> MembershipTargets.withoutVoter(current, peer), done);
    }

    @Override
    public void changePeers(Configuration newConfiguration, Closure done) {
        Objects.requireNonNull(newConfiguration, "newConfiguration");
        changeFrom(current -> newConfiguration, done);
    }

    @Override
    public void addLearners(List<PeerId> learners, Closure done) {
        Objects.requireNonNull(learners, "learners");
        changeFrom(current -> MembershipTargets.withLearners(current, learners), done);
    }

    @Override
    public void removeLearners(List<PeerId> learners, Closure done) {
        Objects.requireNonNull(learners, "learners");
        changeFrom(current -> MembershipTargets.withoutLearners(current, learners), done);
    }

    @Override
    public void addWitness(PeerId witness, Closure done) {
        Objects.requireNonNull(witness, "witness");
        changeFrom(current -> MembershipTargets.withWitness(current, witness), done);
    }

    @Override
    public void setPriority(PeerId peer, int priority, Closure done) {
        Objects.requireNonNull(peer, "peer");
        changeFrom(current -> MembershipTargets.withPriority(current, peer, priority), done);
    }

    /** Computes the target from the configuration in effect (on the lane) and starts the change. */
    private void changeFrom(java.util.function.UnaryOperator<Configuration> targetOf, Closure done) {
        Closure callback = done != null ? done : s -> { };
        lane.execute(() -> {
            if (halted) {
                callback.run(Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is not running", groupId, self));
                return;
            }
            Configuration target;
            try {
                target = targetOf.apply(core.membership().current());
            } catch (IllegalArgumentException e) {
                callback.run(Status.error(RaftError.INVALID_ARGUMENT, e.getMessage()));
                return;
            }
            step(() -> core.changeMembership(target, callback, now()));
        });
    }

    @Override
    public void transferLeadershipTo(PeerId peer, Closure done) {
        Objects.requireNonNull(peer, "peer");
        Closure callback = done != null ? done : s -> { };
        lane.execute(() -> {
            if (halted) {
                callback.run(Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is not running", groupId, self));
            } else {
                step(() -> core.transferLeadership(peer, callback, now()));
            }
        });
    }

    @Override
    public void snapshot(Closure done) {
        if (halted || snapshots == null) {
            complete(done, Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is not running", groupId, self));
            return;
        }
        snapshots.save(timedSnapshot(done));
    }

    /** Counts and times a snapshot that succeeds, then tells {@code done} (may be null). */
    Closure timedSnapshot(Closure done) {
        long start = nanos();
        return status -> {
            if (status.isOk()) {
                metrics.snapshotTaken(nanos() - start);
            }
            complete(done, status);
        };
    }

    /** A snapshot of ours is durable: compact the log (on the disk lane, in order with appends). */
    private void onSnapshotSaved(long index, long snapshotTerm, Closure done) {
        lane.execute(() -> {
            if (!halted) {
                long firstKept = core.onSnapshotSaved(index, options.snapshotLogMargin());
                if (firstKept > 0) {
                    logWriter.submitTruncatePrefix(firstKept);
                }
            }
            snapshots.finish(done, Status.ok());
        });
    }

    @Override
    public List<PeerId> listPeers() {
        return List.copyOf(mirror.configuration.peers());
    }

    @Override
    public NodeStatus status() {
        var storage = options.logStorage();
        return new NodeStatus(groupId, self, halted && mirror.role != Role.ERROR ? Role.SHUTDOWN : mirror.role, mirror.term, mirror.leader, mirror.commitIndex,
                fsm == null ? 0 : fsm.appliedIndex(), storage.firstLogIndex(), storage.lastLogIndex(), mirror.configuration, mirror.matchIndexes,
                mirror.roleSince);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> leaderChange(long term, PeerId leader) {
        LeaderWatch w = leaderWatch;
        if (w == null) {
            throw new IllegalStateException("node " + groupId + "/" + self + " has not started");
        }
        return w.await(term, leader);
    }

    @Override
    public void shutdown(Closure done) {
        lane.execute(() -> {
            if (halted) {
                if (metrics != null) {
                    metrics.close(); // a failed node kept them until now
                }
                complete(done, Status.ok());
                return;
            }
            stop(Status.error(RaftError.SHUTTING_DOWN, "node %s/%s is shutting down", groupId, self), false);
            fsm.shutdown(() -> {
                terminated.countDown();
                complete(done, Status.ok());
            });
        });
    }

    @Override
    public void join() throws InterruptedException {
        terminated.await();
    }

    /** Waits for shutdown to finish, up to {@code timeout}; true if it did. */
    public boolean join(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    /**
     * Stops the node at once as if its process died: no further message, answer or disk write
     * leaves it. For the simulation's crash faults; state on storage stays as it is.
     */
    public void halt() {
        halted = true;
        if (metrics != null) {
            metrics.close();
        }
        if (logWriter != null) {
            logWriter.halt();
        }
        if (timers != null) {
            timers.destroyAll();
        }
        transport.unregister(groupId, self);
        transport.removeConnectionListener(this);
    }

    /** @param failed a failed node keeps its metrics registered: its gauges show it failed */
    private void stop(Status reason, boolean failed) {
        halted = true;
        mirror.roleSince = Instant.now();
        mirror.role = failed ? Role.ERROR : Role.SHUTDOWN;
        if (!failed) {
            metrics.close();
        }
        timers.destroyAll();
        if (leaderWatch != null) {
            leaderWatch.close(); // callers waiting for a leader hear of the stop now
        }
        transport.unregister(groupId, self);
        transport.removeConnectionListener(this);
        closures.failFrom(0, reason);
        carrier.failHeld(new TransportException(TransportException.Kind.CLOSED, reason.message()));
        // What a step that threw left half-decided must never be carried out; then the callers the
        // core still holds (reads, a transfer, a membership change) end, so none waits forever.
        core.ready().clear();
        core.onStop(reason);
        carryOut();
    }

    /**
     * A task on the Raft lane threw. A storage failure (a write, an fsync, a read of the log)
     * stops the node at once and for good: nothing it holds can be trusted to be durable, and an
     * fsync that failed is never retried (its data may be gone while a retry reports success).
     * A malformed request is refused and the node goes on; any other failure stops it too.
     */
    boolean onLaneFailure(Throwable t) {
        if (t instanceof StorageException e) {
            enterError(Status.error(RaftError.STORAGE_ERROR, "storage failed: %s", e.getMessage()));
            return true;
        }
        if (t instanceof WitnessRules.RoleMismatch e) { // one line: the configuration and the node's options disagree
            enterError(Status.error(RaftError.INVALID_ARGUMENT, "%s", e.getMessage()));
            return true;
        }
        if (t instanceof IllegalArgumentException) {
            // A malformed request, refused before the core decided anything: its caller was told
            // (REJECTED); nothing it left in the batch may go out with the next step.
            core.ready().clear();
            return false;
        }
        // Anything else broke a step half way: the core's state can no longer be trusted, so the
        // node stops rather than carry on from a half-made decision.
        enterError(Status.error(RaftError.INTERNAL, "internal error on the Raft lane: %s", t));
        LOG.error("{}/{}: the Raft lane failed", groupId, self, t);
        return true;
    }

    /** Stops the node in role ERROR (until restart): no answers, votes, heartbeats or reads; a leader thereby steps down. */
    private void enterError(Status error) {
        if (halted) {
            return;
        }
        LOG.error("{}/{} stops after an unrecoverable error: {}", groupId, self, error);
        stop(error, true);
        fsm.reportError(error);
        terminated.countDown();
    }

    // ------------------------------------------------------------------ incoming requests and connection events (see NetworkInbound)

    @Override
    public CompletableFuture<RequestVoteResponse> handleRequestVote(RequestVoteRequest request) {
        return inbound.handleRequestVote(request);
    }

    @Override
    public CompletableFuture<AppendEntriesResponse> handleAppendEntries(AppendEntriesRequest request) {
        return inbound.handleAppendEntries(request);
    }

    @Override
    public CompletableFuture<InstallSnapshotResponse> handleInstallSnapshot(InstallSnapshotRequest request) {
        return intake.handle(request);
    }

    TransportException notRunning() {
        return new TransportException(TransportException.Kind.NOT_FOUND, groupId + "/" + self + " is not running");
    }

    /** Runs {@code action} on the lane, or {@code ifHalted} there if the node has stopped. */
    void onLaneOr(Runnable action, Runnable ifHalted) {
        lane.execute(() -> {
            if (halted) {
                ifHalted.run();
            } else {
                action.run();
            }
        });
    }

    @Override
    public CompletableFuture<TimeoutNowResponse> handleTimeoutNow(TimeoutNowRequest request) {
        return inbound.handleTimeoutNow(request);
    }

    @Override
    public CompletableFuture<ReadIndexResponse> handleReadIndex(ReadIndexRequest request) {
        return inbound.handleReadIndex(request);
    }

    @Override
    public void onConnectionLost(String endpoint) {
        inbound.onConnectionLost(endpoint);
    }

    @Override
    public void onPeerGone(String endpoint) {
        inbound.onPeerGone(endpoint);
    }

    @Override
    public void onPeerSilent(String endpoint) {
        inbound.onPeerSilent(endpoint);
    }

    @Override
    public void onConnectionRestored(String endpoint) {
        inbound.onConnectionRestored(endpoint);
    }

    @Override
    public boolean isQuiet() {
        return mirror.quiet;
    }

    /** Whether the ring of recent entries is allocated (released while quiet); on the Raft lane, for tests. */
    boolean holdsRecentEntries() {
        return core.log().holdsRecentEntries();
    }

    // ------------------------------------------------------------------ for NetworkInbound and TimerSteps (Raft lane)

    RaftCore core() {
        return core;
    }

    ReadyCarrier carrier() {
        return carrier;
    }

    NodeReads reads() {
        return reads;
    }

    boolean halted() {
        return halted;
    }

    NodeMetrics metrics() {
        return metrics;
    }

    SnapshotExecutor snapshots() {
        return snapshots;
    }

    // ------------------------------------------------------------------ carrying out decisions

    private long rpcTimeoutMs() {
        return options.electionTimeoutMs();
    }

    /**
     * A peer silent this long is treated as refusing, so a round with a hung peer ends before
     * the vote timer. Not shorter: a voter answers only after fsyncing its vote, which on a busy
     * disk took over T/4 in the chaos runs, and a late grant is wasted. While rounds keep failing
     * it grows with the election backoff, up to T (the vote timer's shortest round): after a
     * process died under hundreds of groups, the survivors' answers took longer than T/2, and
     * every round counted them as refusals and asked again, adding to what kept them late.
     */
    private long voteTimeoutMs() {
        long base = baseVoteTimeoutMs();
        return Math.max(base, Math.min(options.electionTimeoutMs(), base * core.electionBackoff()));
    }

    /** The vote timeout before any round failed: {@code max(2 heartbeat intervals, T/2)}. */
    private long baseVoteTimeoutMs() {
        return Math.max(2L * options.heartbeatIntervalMs(), options.electionTimeoutMs() / 2);
    }

    /** Runs {@code decision} on the core, then carries out what it decided. Raft lane only. */
    void step(Runnable decision) {
        decision.run();
        carryOut();
    }

    /**
     * Carries out the core's batch (see {@link ReadyCarrier} for the order). When it waits for a
     * term and vote write, the rest runs after the current lane task: use it last in a task, or
     * {@link #carryOutNow}.
     */
    void carryOut() {
        carrier.carryOut(core.ready());
    }

    /** Carries out the core's batch completely before returning. */
    void carryOutNow() {
        carrier.carryOutNow(core.ready());
    }

    private final class DiskListener implements LogWriter.Listener {
        @Override
        public void onWritten(long lastIndex, long lastTerm, long generation) {
            onLaneHere(() -> {
                if (generation != logWriter.generation()) {
                    return; // written before a snapshot install reset the log: no longer there
                }
                core.onPersisted(lastIndex, lastTerm, now());
                long durable = core.log().persistedIndex();
                carryOut(); // commits, and releases the acknowledgements the durable log now covers
                metrics.durable(durable, nanos());
            });
        }

        @Override
        public void onWriteFailed(RuntimeException error) {
            // One line (enterError's): the storage's message names the file, operation and error.
            lane.execute(() -> enterError(Status.error(RaftError.STORAGE_ERROR, "log write failed: %s", error.getMessage())));
        }
    }
}
