package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.RequestVoteRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which messages of a batch may leave before its term and vote are durable: only a candidate's
 * own vote requests of the term it is writing (they promise nothing; its own vote counts once
 * durable), never a pre-vote, another node's request, an older term's, or anything else.
 */
class ReadyTest {

    private static final PeerId N1 = new PeerId("n1", 7001);
    private static final PeerId N2 = new PeerId("n2", 7002);

    private static Ready.VoteRequest vote(PeerId from, long term, boolean preVote) {
        return new Ready.VoteRequest(N2, RequestVoteRequest.newBuilder().setGroupId("g").setServerId(from.toString())
                .setPeerId(N2.toString()).setTerm(term).setPreVote(preVote).build());
    }

    @Test
    void onlyTheCandidatesOwnVoteRequestsOfTheWrittenTermMayLeaveFirst() {
        Ready r = new Ready();
        assertFalse(r.mayLeaveBeforeHardState(vote(N1, 3, false)), "nothing is written: no exception needed");
        r.hardState(3, N1);
        assertTrue(r.mayLeaveBeforeHardState(vote(N1, 3, false)));
        assertFalse(r.mayLeaveBeforeHardState(vote(N1, 3, true)), "a pre-vote is not part of the candidacy being written");
        assertFalse(r.mayLeaveBeforeHardState(vote(N1, 2, false)), "another term");
        assertFalse(r.mayLeaveBeforeHardState(vote(N2, 3, false)), "not the node the vote is written for");
        assertFalse(r.mayLeaveBeforeHardState(new Ready.AppendRequest(N2, AppendEntriesRequest.newBuilder().setTerm(3).build())));
    }

    @Test
    void aTermWrittenWithoutOurOwnVoteLetsNothingLeaveFirst() {
        Ready r = new Ready();
        r.hardState(3, null);
        assertFalse(r.mayLeaveBeforeHardState(vote(N1, 3, false)));
        r.hardState(3, N2);
        assertFalse(r.mayLeaveBeforeHardState(vote(N1, 3, false)), "a vote granted to another candidate is no candidacy");
    }
}
