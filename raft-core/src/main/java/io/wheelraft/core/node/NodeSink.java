package io.wheelraft.core.node;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.timer.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * What carrying out a core's {@link Ready} batch does for one node: term/vote and repairing-flag
 * writes to the meta storage, log writes to the {@link LogWriter}, messages to the
 * {@link Outbox}, and the bookkeeping of each event (the {@link NodeMirror}, timers, the state
 * machine's leader callbacks, pending closures, connections, finished callers). The order is
 * {@link ReadyCarrier}'s. A caller's closure runs through {@link CallerCode}, so one that throws
 * cannot cut the batch short. Raft lane only.
 */
final class NodeSink implements ReadyCarrier.Sink {

    private static final Logger LOG = LoggerFactory.getLogger(NodeImpl.class);

    /** The parts of the node the sink acts on; all exist before the first batch. */
    record Parts(String name, NodeOptions options, Clock clock, NodeMirror mirror, NodeMetrics metrics, FsmCaller fsm,
                 ClosureQueue closures, LogWriter logWriter, Outbox outbox, NodeTimers timers, Runnable electionRetry,
                 LongConsumer wake, Runnable campaignSlotWait, LeaderWatch leaderWatch) {
    }

    private final Parts p;
    /** The term of the role the mirror's {@code roleSince} dates. */
    private long roleSinceTerm;

    NodeSink(Parts parts) {
        this.p = parts;
        this.roleSinceTerm = parts.mirror().term;
    }

    @Override
    public void persistHardState(long term, PeerId votedFor) {
        long start = System.nanoTime();
        p.options().metaStorage().setTermAndVote(term, votedFor); // a failure stops the node (NodeImpl.onLaneFailure)
        hardStateDurable(term, votedFor);
        if (LOG.isDebugEnabled()) {
            LOG.debug("{}: term {} and vote {} durable in {} us", p.name(), term, votedFor, (System.nanoTime() - start) / 1000);
        }
    }

    @Override
    public boolean writesHardStateLater() {
        return p.options().metaStorage().writesLater();
    }

    @Override
    public void persistHardStateLater(long term, PeerId votedFor, Consumer<RuntimeException> done) {
        p.options().metaStorage().setTermAndVoteLater(term, votedFor, done);
    }

    @Override
    public void hardStateDurable(long term, PeerId votedFor) {
        if (term != roleSinceTerm) {
            dateRole(term); // a follower moving to a newer term gets no role change from the core (same role, no leader)
        }
        p.mirror().term = term;
        // The watch's copy moves with the status: a follower with no leader that moves to a newer
        // term gets no role change, and a caller waiting from what status() says must not be
        // told of a change at once (HeldLeaderAnswer would go round without pause).
        p.leaderWatch().changed(term, p.mirror().leader);
    }

    @Override
    public void persistRepairing(boolean repairing) {
        p.options().metaStorage().setRepairing(repairing);
    }

    @Override
    public void writeLog(Ready.LogWrite w) {
        // Only a follower writes inline: the leader's own write is off its commit path.
        p.logWriter().submit(w.truncateAfter(), w.entries(), !w.byLeader());
    }

    @Override
    public void send(Ready.Message message) {
        p.outbox().send(message);
    }

    @Override
    public void scheduleElectionRetry() {
        p.electionRetry().run();
    }

    @Override
    public void awaitCampaignSlot() {
        p.campaignSlotWait().run();
    }

    @Override
    public void scheduleWake(long atMs) {
        p.wake().accept(atMs);
    }

    @Override
    public void handle(Ready.Event event) {
        if (event instanceof Ready.RoleChanged r) {
            roleChanged(r.role(), r.term(), r.leader());
        } else if (event instanceof Ready.Committed c) {
            p.metrics().committed(c.index(), p.clock().nanoTime());
            p.mirror().commitIndex = c.index();
            p.fsm().commitTo(c.index());
        } else if (event instanceof Ready.EntriesDiscarded d) {
            p.closures().failFrom(d.fromIndex(), Status.error(RaftError.LEADERSHIP_LOST,
                    "leadership changed before entry %d+ committed; it may or may not be applied", d.fromIndex()));
        } else if (event instanceof Ready.MembershipChanged m) {
            p.mirror().configuration = m.membership().current();
            p.outbox().prepareConnections(m.membership());
        } else if (event instanceof Ready.ReadsConfirmed r) {
            r.reads().forEach(h -> CallerCode.run(() -> h.confirmed(r.readIndex())));
        } else if (event instanceof Ready.ReadsFailed r) {
            r.reads().forEach(h -> CallerCode.run(() -> h.failed(r.leaderHint())));
        } else if (event instanceof Ready.TransferDone d) {
            CallerCode.complete(d.done(), d.status());
        } else if (event instanceof Ready.MembershipChangeDone d) {
            CallerCode.complete(d.done(), d.status());
        } else if (event instanceof Ready.VoteAnswered v) {
            v.to().send(v.answer()); // a held pre-vote answer, decided now
        } else if (event instanceof Ready.QuietChanged q) {
            p.mirror().quiet = q.quiet();
            p.timers().quiet(q.quiet(), p.mirror().role, p.options().snapshotIntervalSecs() > 0);
        }
    }

    /** The node holds its role in {@code term} from now on (a new role, or the same role in a newer term). */
    private void dateRole(long term) {
        roleSinceTerm = term;
        p.mirror().roleSince = Instant.now();
    }

    private void roleChanged(Role newRole, long newTerm, PeerId newLeader) {
        NodeMirror mirror = p.mirror();
        Role old = mirror.role;
        p.metrics().roleChanged(newRole, newLeader != null && !newLeader.equals(mirror.leader), p.clock().nanoTime());
        if (old != newRole || roleSinceTerm != newTerm) {
            dateRole(newTerm); // before the role is published, so no reader sees the new role with the old time
        }
        mirror.role = newRole;
        mirror.term = newTerm;
        mirror.leader = newLeader;
        if (newLeader != null) {
            mirror.lastLeaderContactMs = p.clock().millis();
        }
        p.leaderWatch().changed(newTerm, newLeader);
        p.timers().enter(newRole);
        if (old != Role.LEADER && newRole == Role.LEADER) {
            p.fsm().runOnApplyLane(() -> p.options().stateMachine().onLeaderStart(newTerm));
        } else if (old == Role.LEADER && newRole != Role.LEADER) {
            mirror.matchIndexes = Map.of();
            p.fsm().runOnApplyLane(() -> p.options().stateMachine().onLeaderStop(Status.error(RaftError.LEADERSHIP_LOST,
                    "stepped down in term %d", newTerm)));
        }
        if (p.options().logRoleChanges() || !RoleChangeTally.tallied(newRole)) {
            LOG.info("{} is {} in term {} (leader {})", p.name(), newRole.label(), newTerm, newLeader);
        } else {
            RoleChangeTally.PROCESS.became(newRole, p.clock().millis());
            LOG.debug("{} is {} in term {} (leader {})", p.name(), newRole.label(), newTerm, newLeader);
        }
        if (newLeader != null) {
            p.outbox().warmVotePath(); // peers that were down at our start are up now (one leads)
        }
    }
}
