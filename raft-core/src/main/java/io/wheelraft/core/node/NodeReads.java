package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.ReadIndexClosure;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.ReadHandle;
import io.wheelraft.core.spi.RaftTransport;
import io.wheelraft.proto.ReadIndexMode;
import io.wheelraft.proto.ReadIndexRequest;
import io.wheelraft.proto.ReadIndexResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One node's linearizable reads (ReadIndex): batches the reads asked for on this node, has the
 * leader confirm its leadership once per batch (locally when this node leads, by a ReadIndex call
 * to the leader otherwise), and runs each read once the state machine has applied the read index.
 * Also answers the ReadIndex calls other members send when this node leads.
 *
 * <p>Each read carries the caller's {@link ReadOnlyOption}: on the leader, LEASE reads are served
 * without a round while its lease holds and READ_INDEX reads always get a quorum round; a batch
 * shares one confirmation only with reads of the same option. A read asked for on a follower
 * carries its option in the ReadIndex call ({@link ReadIndexRequest#getMode()}), so the leader
 * confirms it as the caller chose, not as the leader's own options say; a call without the mode
 * (from an older member) is confirmed as the leader's options say.
 *
 * <p>Reads are handed to the Raft core as {@link ReadHandle}s it does not look into: a
 * {@link LocalRead} (this node's caller) or a {@link RemoteRead} (a follower's call); the core
 * hands them back in its batch ({@code Ready.ReadsConfirmed} or {@code Ready.ReadsFailed}) and
 * the node calls the handle's {@code confirmed} or {@code failed}. {@link #submit} is
 * thread-safe; the rest runs on the node's Raft lane, except a confirmed local read, which runs
 * on the apply lane once its index is applied (or fails there if applying stops first).
 */
final class NodeReads {

    /** What the reads need from the node, on its Raft lane. */
    interface Node {
        boolean halted();

        /** Why this node serves no reads now (e.g. it is repairing after a storage fault), or null. */
        String refusal();

        /** True when this node leads, or knows no leader (the core then fails the reads itself). */
        boolean confirmsLocally();

        PeerId leader();

        /** Hands reads to the core to confirm leadership for them, by the lease if {@code lease}. */
        void confirm(List<ReadHandle> handles, boolean lease);
    }

    /** A {@link Node} made of functions: how the node shell wires its state in. */
    record Wiring(java.util.function.BooleanSupplier isHalted, java.util.function.Supplier<String> refusalReason,
                  java.util.function.BooleanSupplier localConfirmation, java.util.function.Supplier<PeerId> leaderId,
                  java.util.function.BiConsumer<List<ReadHandle>, Boolean> confirmer) implements Node {
        @Override
        public boolean halted() {
            return isHalted.getAsBoolean();
        }

        @Override
        public String refusal() {
            return refusalReason.get();
        }

        @Override
        public boolean confirmsLocally() {
            return localConfirmation.getAsBoolean();
        }

        @Override
        public PeerId leader() {
            return leaderId.get();
        }

        @Override
        public void confirm(List<ReadHandle> handles, boolean lease) {
            confirmer.accept(handles, lease);
        }
    }

    /** A read asked for by a follower: answered with the read index once leadership is confirmed. */
    private record RemoteRead(CompletableFuture<ReadIndexResponse> answer) implements ReadHandle {
        @Override
        public void confirmed(long readIndex) {
            answer.complete(ReadIndexResponse.newBuilder().setSuccess(true).setIndex(readIndex).build());
        }

        @Override
        public void failed(PeerId leaderHint) {
            answer.complete(ReadIndexResponse.newBuilder().setSuccess(false)
                    .setLeaderId(leaderHint == null ? "" : leaderHint.toString()).setReason(Status.notLeader(leaderHint).message()).build());
        }
    }

    /** A read of this node's user: runs once the state machine applied the read index. */
    private final class LocalRead implements ReadHandle {
        private final ReadIndexClosure done;

        LocalRead(ReadIndexClosure done) {
            this.done = done;
        }

        @Override
        public void confirmed(long readIndex) {
            fsm.runWhenApplied(readIndex, () -> done.run(Status.ok(), readIndex), stopped -> done.run(stopped, -1));
        }

        @Override
        public void failed(PeerId leaderHint) {
            done.run(Status.notLeader(leaderHint), -1);
        }

        void refuse(Status status) {
            done.run(status, -1);
        }
    }

    /** The handle for a read a follower asked this leader to confirm, answered through {@code answer}. */
    ReadHandle remote(CompletableFuture<ReadIndexResponse> answer) {
        return new RemoteRead(answer);
    }

    private final String groupId;
    private final PeerId self;
    private final SerialLane lane;
    private final RaftTransport transport;
    private final LongSupplier rpcTimeoutMs;
    private final Node node;
    private final FsmCaller fsm;
    /** A read waiting for the lane, with how its caller wants leadership confirmed. */
    private record Queued(ReadIndexClosure done, ReadOnlyOption option) {
    }

    private final Queue<Queued> queued = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushPosted = new AtomicBoolean();

    NodeReads(String groupId, PeerId self, SerialLane lane, RaftTransport transport, LongSupplier rpcTimeoutMs, Node node, FsmCaller fsm) {
        this.groupId = groupId;
        this.self = self;
        this.lane = lane;
        this.transport = transport;
        this.rpcTimeoutMs = rpcTimeoutMs;
        this.node = node;
        this.fsm = fsm;
    }

    /**
     * Queues a read, confirmed as {@code option} says; every read of the same option queued before
     * the lane gets to them shares one confirmation.
     */
    void submit(ReadIndexClosure done, ReadOnlyOption option) {
        queued.add(new Queued(done, option));
        if (flushPosted.compareAndSet(false, true)) {
            lane.execute(this::flush);
        }
    }

    private void flush() {
        flushPosted.set(false);
        List<ReadHandle> byRound = new ArrayList<>();
        List<ReadHandle> byLease = new ArrayList<>();
        Queued q;
        while ((q = queued.poll()) != null) {
            (q.option() == ReadOnlyOption.LEASE ? byLease : byRound).add(new LocalRead(q.done()));
        }
        if (!byRound.isEmpty()) {
            flush(byRound, false);
        }
        if (!byLease.isEmpty()) {
            flush(byLease, true);
        }
    }

    private void flush(List<ReadHandle> batch, boolean lease) {
        if (node.halted()) {
            failed(batch, null);
            return;
        }
        String refusal = node.refusal();
        if (refusal != null) {
            Status refused = Status.error(RaftError.STORAGE_ERROR, "%s", refusal);
            batch.forEach(h -> CallerCode.run(() -> ((LocalRead) h).refuse(refused)));
        } else if (node.confirmsLocally()) {
            node.confirm(batch, lease);
        } else {
            askLeader(node.leader(), batch, lease);
        }
    }

    /**
     * A follower read: the leader confirms its leadership the way these reads chose ({@code lease}
     * or a quorum round) and returns its commit index.
     */
    private void askLeader(PeerId leaderId, List<ReadHandle> batch, boolean lease) {
        ReadIndexRequest req = ReadIndexRequest.newBuilder().setGroupId(groupId).setServerId(self.toString())
                .setPeerId(leaderId.toString()).setCount(batch.size())
                .setMode(lease ? ReadIndexMode.READ_INDEX_MODE_LEASE : ReadIndexMode.READ_INDEX_MODE_QUORUM).build();
        transport.readIndex(leaderId, req, rpcTimeoutMs.getAsLong()).whenComplete((resp, err) -> lane.execute(() -> {
            if (node.halted()) {
                failed(batch, null);
            } else if (resp != null && resp.getSuccess()) {
                confirmed(batch, resp.getIndex());
            } else {
                failed(batch, resp == null || resp.getLeaderId().isEmpty() ? null : PeerId.parse(resp.getLeaderId()));
            }
        }));
    }

    /**
     * How the leader confirms a read a follower forwarded with {@code mode}: as the follower's
     * caller chose, or as {@code leaderDefault} (the leader's own option) when the call names no
     * mode (a member from before the field) or one this build does not know.
     */
    static ReadOnlyOption optionOf(ReadIndexMode mode, ReadOnlyOption leaderDefault) {
        return switch (mode) {
            case READ_INDEX_MODE_QUORUM -> ReadOnlyOption.READ_INDEX;
            case READ_INDEX_MODE_LEASE -> ReadOnlyOption.LEASE;
            case READ_INDEX_MODE_LEADER_DEFAULT, UNRECOGNIZED -> leaderDefault;
        };
    }

    /** Leadership is confirmed for these reads: each runs once {@code readIndex} is applied. */
    private static void confirmed(List<ReadHandle> handles, long readIndex) {
        handles.forEach(h -> CallerCode.run(() -> h.confirmed(readIndex)));
    }

    /** These reads cannot be confirmed here (not the leader, or leadership lost). */
    private static void failed(List<ReadHandle> handles, PeerId leaderHint) {
        handles.forEach(h -> CallerCode.run(() -> h.failed(leaderHint)));
    }
}
