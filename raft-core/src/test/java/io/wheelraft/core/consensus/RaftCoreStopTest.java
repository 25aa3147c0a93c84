package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the node stops, every caller the core still holds ends in the stop's batch (none waits
 * forever), and the stop decides nothing else: no term, vote, message or log write.
 */
class RaftCoreStopTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long T0 = ELECTION_TIMEOUT_MS;
    private static final Status STOPPING = Status.error(RaftError.SHUTTING_DOWN, "n1 is shutting down");

    private CoreNode leader;

    /** A 3-node group led by n1 with its term's no-op committed. */
    private void cluster() {
        leader = CoreNode.create(N1, peers(3), 0, new long[] {}, 0);
        CoreNode n2 = CoreNode.create(N2, peers(3), 0, new long[] {}, 0);
        CoreNode n3 = CoreNode.create(N3, peers(3), 0, new long[] {}, 0);
        leader.electByHand(T0);
        new CoreRouter(List.of(leader, n2, n3)).settle(T0);
        assertEquals(1, leader.core.commitIndex(), "the term's no-op is committed");
    }

    @Test
    void stopEndsAPendingReadAndALeaderTransferAndDecidesNothingElse() {
        cluster();
        ReadHandle read = RecordingEffects.read("unconfirmed read");
        leader.core.readIndex(List.of(read), false, T0 + 10); // its heartbeat round is never answered
        io.wheelraft.core.Closure transferCaller = s -> { };
        leader.core.transferLeadership(N2, transferCaller, T0 + 10); // the target never takes over
        assertTrue(leader.fx.all(RecordingEffects.ReadsFailed.class).isEmpty(), "the read is still pending");
        assertTrue(leader.fx.all(RecordingEffects.TransferDone.class).isEmpty(), "the transfer is still running");
        int before = leader.fx.events().size();

        leader.core.onStop(STOPPING);

        List<RecordingEffects.Event> stop = leader.fx.events().subList(before, leader.fx.events().size());
        assertTrue(stop.stream().anyMatch(e -> e instanceof RecordingEffects.ReadsFailed f && f.handles().contains(read)
                && f.leaderHint() == null), "the pending read fails, with no leader hint: " + stop);
        RecordingEffects.TransferDone done = stop.stream().filter(RecordingEffects.TransferDone.class::isInstance)
                .map(RecordingEffects.TransferDone.class::cast).findFirst().orElseThrow(() -> new AssertionError("no TransferDone in " + stop));
        assertEquals(transferCaller, done.handle());
        assertEquals(RaftError.SHUTTING_DOWN, done.status().code());
        assertOnlyCallerEnds(stop);
    }

    @Test
    void stopEndsAMembershipChangeInProgress() {
        cluster();
        Status[] outcome = new Status[1];
        leader.core.changeMembership(new Configuration(List.of(N1, N2, N3, peer(4))), s -> outcome[0] = s, T0 + 10);
        assertTrue(leader.fx.all(RecordingEffects.ChangeDone.class).isEmpty(), "the new voter is still catching up");
        int before = leader.fx.events().size();

        leader.core.onStop(STOPPING);

        List<RecordingEffects.Event> stop = leader.fx.events().subList(before, leader.fx.events().size());
        List<RecordingEffects.ChangeDone> done = stop.stream().filter(RecordingEffects.ChangeDone.class::isInstance)
                .map(RecordingEffects.ChangeDone.class::cast).toList();
        assertEquals(1, done.size(), "the change's caller ends once: " + stop);
        assertFalse(done.get(0).status().isOk());
        assertNull(outcome[0], "the core only reports the caller; the shell runs it");
        assertOnlyCallerEnds(stop);
    }

    @Test
    void stopWithNothingPendingDecidesNothing() {
        cluster();
        int before = leader.fx.events().size();
        leader.core.onStop(STOPPING);
        assertEquals(before, leader.fx.events().size(), "nothing to end, nothing decided");
    }

    private static void assertOnlyCallerEnds(List<RecordingEffects.Event> stop) {
        for (RecordingEffects.Event e : stop) {
            assertTrue(e instanceof RecordingEffects.ReadsFailed || e instanceof RecordingEffects.TransferDone
                    || e instanceof RecordingEffects.ChangeDone, "the stop decided more than ending callers: " + e);
        }
    }
}
