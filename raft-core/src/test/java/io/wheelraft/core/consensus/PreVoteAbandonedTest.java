package io.wheelraft.core.consensus;

import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A follower's pre-vote round that got no answers ends when the leader of its term speaks. */
class PreVoteAbandonedTest {

    private static AppendEntriesRequest heartbeat(long term) {
        return AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(peer(2).toString()).setTerm(term)
                .setPrevLogIndex(0).setPrevLogTerm(0).setHeartbeat(true).build();
    }

    @Test
    void aPreVoteWithoutAnswersIsDroppedWhenTheLeaderSpeaksSoTheFollowerCanGoQuietAgain() {
        CoreNode n = CoreNode.create(peer(1), peers(3), 3, new long[0], 0);
        n.core.handleAppendEntries(heartbeat(3), 0);
        assertEquals(Role.FOLLOWER, n.core.role());
        assertTrue(n.core.electionState().idle(), "a follower hearing its leader has no election business");

        long later = 3L * ELECTION_TIMEOUT_MS;
        n.core.onElectionTimeout(later); // the leader seemed gone: a pre-vote round starts
        assertTrue(n.fx.takeOutbox().stream().anyMatch(RecordingEffects.Send::isPreVote));
        assertFalse(n.core.electionState().idle(), "the round is open while its answers are awaited");

        // No voter answers (busy or down); the leader of the same term is heard again.
        n.core.handleAppendEntries(heartbeat(3), later + 10);
        assertEquals(3, n.core.term(), "a pre-vote changes no term");
        assertEquals(Role.FOLLOWER, n.core.role());
        assertTrue(n.core.electionState().idle(), "the unanswered pre-vote must not stay open under a live leader");
        assertEquals(List.of(), n.fx.takeOutbox().stream().filter(RecordingEffects.Send::isPreVote).toList(), "nothing more asked");
    }
}
