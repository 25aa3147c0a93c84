package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.GRACE_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads whose way of confirming leadership is chosen per call, against the node's default: a
 * LEASE read skips the quorum round only while the lease holds (and is never served by a leader
 * that lost it), a READ_INDEX read always waits for a quorum round.
 */
class RaftCoreReadModeTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long T0 = ELECTION_TIMEOUT_MS;
    /** When the leader's last heartbeat round before each read was sent (and answered). */
    private static final long BEAT = T0 + 10;
    private static final long LEASE_MS = Math.min(ELECTION_TIMEOUT_MS, GRACE_MS / 2);

    private CoreNode leader;
    private CoreRouter net;
    private int sendsLooked;

    /** A 3-node group led by n1, whose options choose leases ({@code leaseByDefault}) or not; one answered heartbeat round at BEAT. */
    private void cluster(boolean leaseByDefault) {
        leader = CoreNode.create(new RaftConfig("g", N1, ELECTION_TIMEOUT_MS, GRACE_MS, 4, 64, 1 << 20, leaseByDefault, 0),
                peers(3), 0, new long[] {}, 0);
        CoreNode n2 = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        CoreNode n3 = CoreNode.create(N3, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        net = new CoreRouter(List.of(leader, n2, n3));
        net.settle(T0);
        leader.core.onHeartbeatTimeout(BEAT);
        net.settle(BEAT);
        assertEquals(1, leader.core.commitIndex(), "the term's no-op is committed: reads need not wait for it");
        sendsLooked = leader.fx.sends().size();
    }

    private boolean confirmed(ReadHandle read) {
        return leader.fx.all(RecordingEffects.ReadsConfirmed.class).stream().anyMatch(e -> e.handles().contains(read));
    }

    private boolean failed(ReadHandle read) {
        return leader.fx.all(RecordingEffects.ReadsFailed.class).stream().anyMatch(e -> e.handles().contains(read));
    }

    /** The appends (heartbeats) the leader sent since the last look. */
    private long heartbeatsQueued() {
        List<RecordingEffects.Send> sends = leader.fx.sends();
        long n = sends.subList(sendsLooked, sends.size()).stream().filter(RecordingEffects.Send::isAppend).count();
        sendsLooked = sends.size();
        return n;
    }

    @Test
    void perCallLeaseReadOnAReadIndexNodeSkipsTheRoundWhileTheLeaseHolds() {
        cluster(false);
        ReadHandle byDefault = RecordingEffects.read("default read");
        leader.core.readIndex(List.of(byDefault), BEAT + 20);
        assertFalse(confirmed(byDefault), "the node's own option (READ_INDEX) waits for a round");
        assertEquals(2, heartbeatsQueued(), "a round to both followers");
        net.settle(BEAT + 20);
        assertTrue(confirmed(byDefault));

        ReadHandle first = RecordingEffects.read("first lease read");
        leader.core.readIndex(List.of(first), true, BEAT + 40);
        assertFalse(confirmed(first), "no lease was asked for before: no answered heartbeat carries one, so a round");
        assertEquals(2, heartbeatsQueued(), "a round to both followers");
        net.settle(BEAT + 40);
        assertTrue(confirmed(first));
        leader.core.onHeartbeatTimeout(BEAT + 50); // the first heartbeat-timer round that carries the lease
        net.settle(BEAT + 50);
        heartbeatsQueued();

        ReadHandle lease = RecordingEffects.read("lease read");
        leader.core.readIndex(List.of(lease), true, BEAT + 60);
        assertTrue(confirmed(lease), "served at once while the lease holds");
        assertEquals(0, heartbeatsQueued(), "no heartbeat round for a lease read within the lease");
    }

    @Test
    void perCallLeaseReadIsNotServedByALeaderThatLostItsLease() {
        cluster(false);
        net.cut.addAll(List.of(N2, N3)); // the leader is alone from here on
        long afterLease = BEAT + LEASE_MS;
        ReadHandle lease = RecordingEffects.read("lease read");
        leader.core.readIndex(List.of(lease), true, afterLease);
        assertFalse(confirmed(lease), "the lease has run out: the read needs a round");
        assertEquals(2, heartbeatsQueued(), "it falls back to a quorum round");
        leader.core.onHeartbeatTimeout(afterLease + 50);
        net.settle(afterLease + 50);
        assertFalse(confirmed(lease), "no quorum answers: never served");

        leader.core.onStepDownCheck(BEAT + ELECTION_TIMEOUT_MS);
        assertEquals(Role.FOLLOWER, leader.core.role(), "check-quorum stepped the leader down");
        assertTrue(failed(lease), "the waiting read fails (NOT_LEADER) so the caller goes elsewhere");
        assertFalse(confirmed(lease));

        ReadHandle late = RecordingEffects.read("lease read after stepping down");
        leader.core.readIndex(List.of(late), true, BEAT + ELECTION_TIMEOUT_MS + 1);
        assertTrue(failed(late), "a former leader refuses lease reads at once");
    }

    @Test
    void perCallReadIndexReadOnALeaseNodeWaitsForAQuorumRound() {
        cluster(true);
        ReadHandle byDefault = RecordingEffects.read("default read");
        leader.core.readIndex(List.of(byDefault), BEAT + 20);
        assertTrue(confirmed(byDefault), "the node's own option (LEASE) serves at once within the lease");
        assertEquals(0, heartbeatsQueued());

        ReadHandle quorum = RecordingEffects.read("read-index read");
        leader.core.readIndex(List.of(quorum), false, BEAT + 30);
        assertFalse(confirmed(quorum), "READ_INDEX for this call: the lease does not count");
        assertEquals(2, heartbeatsQueued(), "a heartbeat round to both followers");
        net.settle(BEAT + 30);
        assertTrue(confirmed(quorum), "a quorum answered the round");

        net.cut.addAll(List.of(N2, N3));
        ReadHandle cutOff = RecordingEffects.read("read-index read while cut off");
        leader.core.readIndex(List.of(cutOff), false, BEAT + 40);
        net.settle(BEAT + 40);
        assertFalse(confirmed(cutOff), "even inside the lease, no quorum answer means no READ_INDEX read");
    }

    /** A read held until the term's first commit keeps its caller's choice. */
    @Test
    void readHeldForTheFirstCommitOfTheTermKeepsItsOption() {
        leader = CoreNode.create(new RaftConfig("g", N1, ELECTION_TIMEOUT_MS, GRACE_MS, 4, 64, 1 << 20, false, 0),
                peers(3), 0, new long[] {}, 0);
        // n3 is down and the leader's no-op stays undurable, so nothing of the term commits yet.
        net = new CoreRouter(List.of(leader, CoreNode.create(N2, peers(3), 0, new long[] {}, 0)));
        net.flushSenders = false;
        leader.electByHand(T0);
        net.settle(T0);
        leader.core.onHeartbeatTimeout(T0);
        net.settle(T0); // n2 acknowledged a heartbeat round, but no lease was asked for yet: it carries none
        ReadHandle quorum = RecordingEffects.read("read-index read");
        ReadHandle lease = RecordingEffects.read("lease read");
        leader.core.readIndex(List.of(quorum), false, T0);
        leader.core.readIndex(List.of(lease), true, T0);
        assertEquals(0, leader.core.commitIndex());
        assertFalse(confirmed(quorum) || confirmed(lease), "no entry of the term committed yet");
        leader.core.onHeartbeatTimeout(T0 + 1); // the lease read armed the lease: this round carries it
        net.settle(T0 + 1);
        sendsLooked = leader.fx.sends().size();

        leader.flushDisk(); // the no-op is durable on the leader too: committed, the held reads start
        assertEquals(1, leader.core.commitIndex());
        assertTrue(confirmed(lease), "the held LEASE read is served by the lease");
        assertFalse(confirmed(quorum), "the held READ_INDEX read waits for its own round, not the lease");
        assertEquals(2, heartbeatsQueued(), "the held READ_INDEX read's round");
        net.settle(T0);
        assertTrue(confirmed(quorum));
    }
}
