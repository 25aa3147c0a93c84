package io.wheelraft.core.consensus;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Role;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;
import io.wheelraft.proto.TimeoutNowRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.wheelraft.core.consensus.CoreNode.ELECTION_TIMEOUT_MS;
import static io.wheelraft.core.consensus.CoreNode.data;
import static io.wheelraft.core.consensus.CoreNode.peer;
import static io.wheelraft.core.consensus.CoreNode.peers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The witness rules in the pure core: n1 and n2 are data members, n3 a witness. The leader strips
 * payloads for the witness only, gives it no failover turn and counts its acknowledgement; the
 * witness stores headers only, votes by its log like any voter, and never campaigns; voters
 * refuse its vote requests; a transfer to it is refused; a node whose role disagrees with the
 * configuration stops.
 */
class WitnessRulesTest {

    private static final PeerId N1 = peer(1);
    private static final PeerId N2 = peer(2);
    private static final PeerId N3 = peer(3);
    private static final long T0 = ELECTION_TIMEOUT_MS;
    private static final Configuration CONF = new Configuration(peers(3)).withWitness(N3);

    private static RaftConfig config(PeerId self, boolean witness) {
        return new RaftConfig("g", self, ELECTION_TIMEOUT_MS, CoreNode.GRACE_MS, 4, 64, 1 << 20, false, 0, witness);
    }

    private static CoreNode node(PeerId self, long[] logTerms) {
        return CoreNode.create(config(self, self.equals(N3)), CONF, logTerms.length == 0 ? 0 : logTerms[logTerms.length - 1],
                logTerms, false, 0);
    }

    private static RequestVoteRequest voteRequest(PeerId candidate, long term, long lastIndex, long lastTerm, boolean preVote) {
        return RequestVoteRequest.newBuilder().setGroupId("g").setServerId(candidate.toString()).setTerm(term)
                .setLastLogIndex(lastIndex).setLastLogTerm(lastTerm).setPreVote(preVote).build();
    }

    private static List<AppendEntriesRequest> appendsTo(CoreNode leader, PeerId to) {
        return leader.fx.sends().stream().filter(s -> s.isAppend() && s.to().equals(to)).map(RecordingEffects.Send::append).toList();
    }

    private static List<LogEntry> dataEntries(List<AppendEntriesRequest> appends) {
        return appends.stream().flatMap(a -> a.getEntriesList().stream()).filter(e -> e.getType() == EntryType.ENTRY_TYPE_DATA).toList();
    }

    /** Delivers the leader's appends to the followers and their answers back, until none is left in flight. */
    private static void exchange(CoreNode leader, long nowMs, CoreNode... followers) {
        leader.flushDisk();
        for (int round = 0; round < 20; round++) {
            List<RecordingEffects.Send> out = leader.fx.takeOutbox();
            if (out.isEmpty()) {
                return;
            }
            for (RecordingEffects.Send s : out) {
                for (CoreNode f : followers) {
                    if (s.isAppend() && s.to().equals(f.id)) {
                        RaftCore.AppendResult r = f.core.handleAppendEntries(s.append(), nowMs);
                        f.flushDisk();
                        leader.core.handleAppendEntriesResponse(f.id, s.append(), r.response(), nowMs);
                    }
                }
            }
            leader.flushDisk();
        }
    }

    @Test
    void leaderSendsTheWitnessHeadersOnlyAndTheDataMemberWholeEntries() {
        CoreNode leader = node(N1, new long[] {});
        leader.electByHand(T0 + 1);
        exchange(leader, T0 + 1, node(N2, new long[] {}), node(N3, new long[] {}));
        leader.fx.clear();
        leader.core.propose(leader.commands(3), T0 + 2);
        List<LogEntry> toData = dataEntries(appendsTo(leader, N2));
        List<LogEntry> toWitness = dataEntries(appendsTo(leader, N3));
        assertEquals(3, toData.size());
        assertEquals(3, toWitness.size());
        for (int i = 0; i < 3; i++) {
            assertFalse(toData.get(i).getData().isEmpty(), "the data member needs the payload");
            assertTrue(toWitness.get(i).getData().isEmpty(), "the witness got a payload at " + toWitness.get(i).getIndex());
            assertEquals(toData.get(i).getIndex(), toWitness.get(i).getIndex());
            assertEquals(toData.get(i).getTerm(), toWitness.get(i).getTerm());
        }
        assertFalse(leader.log.entries(toData.get(0).getIndex(), 3, 1 << 20).get(0).getData().isEmpty(),
                "the leader's own log keeps the payload");
    }

    @Test
    void witnessAcknowledgementCommitsWithTheLeader() {
        CoreNode leader = node(N1, new long[] {});
        leader.electByHand(T0 + 1);
        CoreNode witness = node(N3, new long[] {});
        exchange(leader, T0 + 1, witness); // n2 never answers
        long first = leader.core.propose(leader.commands(2), T0 + 2);
        exchange(leader, T0 + 3, witness);
        assertTrue(witness.storage.entry(first).getData().isEmpty());
        assertEquals(first + 1, leader.core.commitIndex(), "leader + witness are a majority of three: the entries commit");
    }

    @Test
    void witnessStoresHeadersOnlyEvenWhenALeaderSendsPayloads() {
        CoreNode witness = node(N3, new long[] {});
        AppendEntriesRequest req = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).setCommittedIndex(0).setSequence(1)
                .addEntries(data(1, 1, "payload")).addEntries(data(2, 1, "more")).build();
        assertTrue(witness.core.handleAppendEntries(req, 10).response().getSuccess());
        witness.flushDisk();
        assertEquals(2, witness.storage.lastLogIndex());
        assertTrue(witness.storage.entry(1).getData().isEmpty());
        assertTrue(witness.storage.entry(2).getData().isEmpty());
        assertEquals(1, witness.storage.entry(2).getTerm());
    }

    @Test
    void leaderGivesTheWitnessNoFailoverTurn() {
        CoreNode leader = node(N1, new long[] {});
        leader.electByHand(T0 + 1);
        leader.fx.clear();
        leader.core.onHeartbeatTimeout(T0 + 2);
        List<AppendEntriesRequest> toWitness = appendsTo(leader, N3);
        List<AppendEntriesRequest> toData = appendsTo(leader, N2);
        assertFalse(toWitness.isEmpty());
        assertEquals(0, toWitness.get(0).getFailoverTurn(), "the witness may not campaign: no turn");
        assertEquals(1, toData.get(0).getFailoverTurn(), "the data member comes first, not behind the witness");
    }

    @Test
    void witnessNeverCampaignsNorTakesATimeoutNow() {
        CoreNode witness = node(N3, new long[] {1, 1});
        witness.core.onElectionTimeout(10 * T0);
        witness.core.onElectionRetry(11 * T0);
        witness.core.onWake(12 * T0);
        assertFalse(witness.core.onConnectionLost(N1.endpoint(), 12 * T0));
        assertTrue(witness.fx.sends().isEmpty(), "the witness asked for votes: " + witness.fx.sends());
        var answer = witness.core.handleTimeoutNow(TimeoutNowRequest.newBuilder().setGroupId("g").setServerId(N1.toString())
                .setPeerId(N3.toString()).setTerm(witness.core.term()).build(), 13 * T0);
        assertFalse(answer.getSuccess());
        assertEquals(Role.FOLLOWER, witness.core.role());
        assertEquals(1, witness.core.term(), "no term was started");
    }

    @Test
    void witnessVotesByItsLogLikeAnyVoter() {
        CoreNode witness = node(N3, new long[] {1, 1, 2});
        long t = 10 * T0; // its leader is long silent
        RequestVoteResponse stale = witness.core.handleRequestVote(voteRequest(N2, 3, 2, 1, false), t);
        assertFalse(stale.getGranted(), "a candidate behind the witness's headers must not win its vote");
        RequestVoteResponse upToDate = witness.core.handleRequestVote(voteRequest(N1, 3, 3, 2, false), t);
        assertTrue(upToDate.getGranted(), upToDate.getReason());
        assertEquals(N1, witness.core.votedFor());
    }

    @Test
    void votersRefuseVoteRequestsFromTheWitness() {
        CoreNode voter = node(N2, new long[] {1});
        long t = 10 * T0;
        for (boolean preVote : new boolean[] {true, false}) {
            RequestVoteResponse r = voter.core.handleRequestVote(voteRequest(N3, 2, 5, 1, preVote), t);
            assertFalse(r.getGranted(), (preVote ? "pre-vote" : "vote") + " granted to the witness");
            assertTrue(r.getReason().contains("witness"), r.getReason());
        }
        assertNull(voter.core.votedFor());
    }

    @Test
    void transferToTheWitnessIsRefused() {
        CoreNode leader = node(N1, new long[] {});
        leader.electByHand(T0 + 1);
        leader.fx.clear();
        leader.core.transferLeadership(N3, s -> { }, T0 + 2);
        var done = leader.fx.all(RecordingEffects.TransferDone.class);
        assertEquals(1, done.size());
        assertEquals(RaftError.INVALID_ARGUMENT, done.get(0).status().code());
        assertTrue(done.get(0).status().message().contains("witness"), done.get(0).status().message());
        assertFalse(leader.core.transferring());
    }

    @Test
    void dataNodeMarkedAsWitnessByAConfigurationEntryStops() {
        CoreNode follower = node(N2, new long[] {});
        Configuration marked = CONF.withWitness(N2);
        AppendEntriesRequest req = AppendEntriesRequest.newBuilder().setGroupId("g").setServerId(N1.toString()).setTerm(1)
                .setPrevLogIndex(0).setPrevLogTerm(0).setSequence(1).addEntries(LogEntry.newBuilder().setIndex(1).setTerm(1)
                        .setType(EntryType.ENTRY_TYPE_CONFIGURATION).setConfiguration(marked.toEntry())).build();
        WitnessRules.RoleMismatch e = assertThrows(WitnessRules.RoleMismatch.class, () -> follower.core.handleAppendEntries(req, 10));
        assertTrue(e.getMessage().contains(N2 + " runs as a data node") && e.getMessage().contains("marks it as a witness"), e.getMessage());
    }

    @Test
    void roleErrorNamesBothMismatches() {
        Membership m = Membership.of(CONF);
        assertNull(WitnessRules.roleError(true, N3, m));
        assertNull(WitnessRules.roleError(false, N1, m));
        assertNull(WitnessRules.roleError(true, peer(9), m), "a node that is no member yet may start as a witness and wait");
        assertNotNull(WitnessRules.roleError(false, N3, m));
        String e = WitnessRules.roleError(true, N2, m);
        assertTrue(e.contains("runs as a witness") && e.contains("data member"), e);
    }

    @Test
    void headersOnlyKeepsConfigurationsAndReusesAListWithoutPayloads() {
        LogEntry conf = LogEntry.newBuilder().setIndex(1).setTerm(1).setType(EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(CONF.toEntry()).build();
        LogEntry noop = LogEntry.newBuilder().setIndex(2).setTerm(1).setType(EntryType.ENTRY_TYPE_NO_OP).build();
        List<LogEntry> without = List.of(conf, noop);
        assertTrue(WitnessRules.headersOnly(without) == without, "nothing to strip: the same list");
        List<LogEntry> stripped = WitnessRules.headersOnly(List.of(conf, data(2, 1, "x"), noop));
        assertEquals(conf, stripped.get(0));
        assertTrue(stripped.get(1).getData().isEmpty());
        assertEquals(EntryType.ENTRY_TYPE_DATA, stripped.get(1).getType());
        assertEquals(noop, stripped.get(2));
    }
}
