package io.wheelraft.core.consensus;

import io.wheelraft.proto.RequestVoteResponse;

/**
 * Where the answer to a (pre-)vote request goes once it is decided. The core holds it while a
 * pre-vote answer waits (see {@link RaftCore#handleRequestVote(io.wheelraft.proto.RequestVoteRequest, long, VoteReply)})
 * and hands it back in {@link Ready.VoteAnswered}; the node shell delivers the answer. Called on
 * the node's Raft lane only.
 */
@FunctionalInterface
public interface VoteReply {

    void send(RequestVoteResponse answer);
}
