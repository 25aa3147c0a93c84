package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.Membership;
import io.wheelraft.core.consensus.RaftCore;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotStorage;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.proto.InstallSnapshotRequest;
import io.wheelraft.proto.InstallSnapshotResponse;
import io.wheelraft.proto.SnapshotMeta;

import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The follower's side of InstallSnapshot on the Raft lane (Raft §7): the leader checks each chunk
 * passes before the {@link SnapshotInstaller} writes it (on the snapshot lane), and installing a
 * complete snapshot into the core, the log and the state machine. Each call into the core is
 * followed by carrying out its batch, so a newer term is durable before any answer in it.
 * Requests arrive from transport threads; all work runs on the Raft lane.
 */
final class SnapshotIntake {

    /** The parts of the node the intake works with. */
    record Parts(RaftCore core, Runnable carryOut, LongSupplier now, BiConsumer<Runnable, Runnable> onLaneOr,
                 BooleanSupplier halted, Supplier<TransportException> notRunning, NodeMirror mirror, FsmCaller fsm, SnapshotExecutor snapshots,
                 LogWriter logWriter) {
    }

    private final Parts p;
    private final SnapshotInstaller installer;

    SnapshotIntake(Parts parts, String name, SnapshotStorage storage, SerialLane snapshotLane, Consumer<Status> storageFailed) {
        this.p = parts;
        this.installer = new SnapshotInstaller(name, storage, snapshotLane, this::install, storageFailed, parts.halted(), parts.notRunning());
    }

    /** A chunk from the leader: checked on the Raft lane, then written on the snapshot lane. */
    CompletableFuture<InstallSnapshotResponse> handle(InstallSnapshotRequest request) {
        CompletableFuture<InstallSnapshotResponse> f = new CompletableFuture<>();
        p.onLaneOr().accept(() -> {
            RaftCore core = p.core();
            boolean accepted = core.acceptSnapshotChunk(PeerId.parse(request.getServerId()), request.getTerm(), p.now().getAsLong());
            p.carryOut().run(); // a newer term is durable before any answer in it
            if (!accepted) {
                f.complete(SnapshotInstaller.refuse(core.term(), request, "not accepted from " + request.getServerId()
                        + " in term " + request.getTerm() + " (this node is in term " + core.term() + ")"));
                return;
            }
            p.mirror().lastLeaderContactMs = core.lastLeaderContactMs();
            if (core.holds(request.getMeta().getLastIncludedIndex())) {
                f.complete(SnapshotInstaller.installed(core.term()));
                return;
            }
            installer.receive(request, core.term(), f);
        }, () -> f.completeExceptionally(p.notRunning().get()));
        return f;
    }

    /**
     * The leader's snapshot arrived whole and verified: replace the log and the state machine
     * with it (Raft §7). The leader hears of success only once the state machine loaded it and
     * the log reset is durable; a failed load stops the node (role ERROR).
     */
    private void install(InstallSnapshotRequest last, SnapshotReader reader, CompletableFuture<InstallSnapshotResponse> answer) {
        p.onLaneOr().accept(() -> {
            SnapshotMeta meta = reader.meta();
            long index = meta.getLastIncludedIndex();
            if (p.core().holds(index)) {
                reader.close();
                answer.complete(SnapshotInstaller.installed(p.core().term()));
                return;
            }
            boolean accepted = p.core().acceptSnapshotChunk(PeerId.parse(last.getServerId()), last.getTerm(), p.now().getAsLong());
            p.carryOut().run();
            if (!accepted) {
                reader.close();
                answer.complete(SnapshotInstaller.refuse(p.core().term(), last, "the sender is no longer leader of term " + p.core().term()));
                return;
            }
            p.fsm().beginSnapshotLoad();
            Membership membership = meta.getConfiguration().getPeersCount() > 0
                    ? Membership.fromEntry(meta.getConfiguration(), index) : p.core().membership();
            boolean reset = p.core().installSnapshot(index, meta.getLastIncludedTerm(), membership, p.now().getAsLong());
            p.carryOut().run(); // also releases acknowledgements the installed snapshot covers
            p.snapshots().noteInstalled(index);
            p.mirror().commitIndex = Math.max(p.mirror().commitIndex, index);
            CompletableFuture<Void> durable = new CompletableFuture<>();
            if (reset) {
                p.logWriter().submitReset(index + 1, () -> durable.complete(null));
            } else {
                durable.complete(null);
            }
            CompletableFuture<Status> loaded = new CompletableFuture<>();
            p.fsm().loadSnapshot(reader, loaded::complete);
            long answerTerm = p.core().term();
            durable.thenCombine(loaded, (v, error) -> error).thenAccept(error -> answer.complete(error == null
                    ? SnapshotInstaller.installed(answerTerm)
                    : SnapshotInstaller.refuse(answerTerm, last, "loading the snapshot failed: " + error)));
        }, () -> {
            reader.close();
            answer.completeExceptionally(p.notRunning().get());
        });
    }
}
