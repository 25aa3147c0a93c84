package io.wheelraft.rpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AdminResult;
import io.wheelraft.proto.NodeStatusResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AdminServiceTest {

    private static final long TIMEOUT = 10_000;

    private GrpcRaftTransport server;
    private AdminClient admin;
    private FakeNode node;
    private PeerId self;

    @BeforeEach
    void start() {
        server = GrpcRaftTransport.builder().start();
        self = PeerId.parse(server.endpoint());
        node = new FakeNode("counter", self, self, Configuration.parse(self + ",127.0.0.1:2,127.0.0.1:3"));
        server.nodes().register(node);
        admin = new AdminClient(server.endpoint(), RpcOptions.defaults());
    }

    @AfterEach
    void stop() {
        admin.close();
        server.close();
    }

    @Test
    void statusDescribesTheNode() {
        NodeStatusResponse s = admin.status("counter", "", TIMEOUT);
        assertTrue(s.getResult().getSuccess());
        assertEquals("leader", s.getRole());
        assertEquals(4, s.getTerm());
        assertEquals(self.toString(), s.getLeader());
        assertEquals(10, s.getCommitIndex());
        assertEquals(12, s.getLastLogIndex());
        assertEquals(3, s.getConfiguration().getPeersCount());
        assertEquals(11L, s.getFollowerMatchIndexMap().get("127.0.0.1:2"));
        assertEquals(java.time.Instant.parse("2026-01-02T03:04:05.123456Z").toEpochMilli() * 1000 + 456, s.getRoleSinceUnixMicros());
    }

    @Test
    void groupsSummaryCountsEveryHostedNodeAndItsLeadersAndFollowsRunTimeChanges() {
        // the fixture's node leads group "counter"; add two more groups, one led elsewhere
        FakeNode led = new FakeNode("7", self, self, Configuration.parse(self + ",127.0.0.1:2"));
        FakeNode following = new FakeNode("8", self, PeerId.parse("127.0.0.1:2"), Configuration.parse(self + ",127.0.0.1:2"));
        server.nodes().register(led);
        server.nodes().register(following);
        var summary = admin.groupsSummary(TIMEOUT);
        assertTrue(summary.getResult().getSuccess());
        assertEquals(3, summary.getGroups());
        assertEquals(2, summary.getLeaders());
        assertEquals(0, summary.getQuiet());
        following.quiet = true;
        led.quiet = true;
        assertEquals(2, admin.groupsSummary(TIMEOUT).getQuiet(), "quiet nodes are counted");

        server.nodes().unregister(led);
        summary = admin.groupsSummary(TIMEOUT);
        assertEquals(2, summary.getGroups());
        assertEquals(1, summary.getLeaders());
        StatusRuntimeException gone = assertThrows(StatusRuntimeException.class, () -> admin.status("7", "", TIMEOUT));
        assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
    }

    @Test
    void ledGroupsListsEachLedGroupOnceNumericIdsPackedOthersByNameAndFollowsRunTimeChanges() {
        // the fixture's node leads group "counter"; add numbered groups, led here or elsewhere
        PeerId other = PeerId.parse("127.0.0.1:2");
        FakeNode seven = new FakeNode("7", self, self, Configuration.parse(self + ",127.0.0.1:2"));
        server.nodes().register(seven);
        server.nodes().register(new FakeNode("0", self, self, Configuration.parse(self + ",127.0.0.1:2")));
        server.nodes().register(new FakeNode("8", self, other, Configuration.parse(self + ",127.0.0.1:2")));
        server.nodes().register(new FakeNode("007", self, self, Configuration.parse(self + ",127.0.0.1:2")));
        // two nodes of group 12 hosted here, both believing they lead (different terms, for a moment): listed once
        PeerId second = new PeerId(self.host(), self.port(), 1);
        server.nodes().register(new FakeNode("12", self, self, Configuration.parse(self + "," + second)));
        server.nodes().register(new FakeNode("12", second, second, Configuration.parse(self + "," + second)));

        var led = admin.ledGroups(TIMEOUT);
        assertTrue(led.getResult().getSuccess());
        assertEquals(7, led.getGroups());
        assertEquals(java.util.Set.of(0, 7, 12), java.util.Set.copyOf(led.getNumberedList()));
        assertEquals(3, led.getNumberedCount());
        assertEquals(java.util.Set.of("counter", "007"), java.util.Set.copyOf(led.getNamedList()));
        assertEquals(java.util.Set.of("0", "7", "12", "counter", "007"), java.util.Set.copyOf(AdminClient.groupIds(led)));

        server.nodes().unregister(seven);
        node.leader = other; // "counter" is led elsewhere now
        led = admin.ledGroups(TIMEOUT);
        assertEquals(6, led.getGroups());
        assertEquals(java.util.Set.of(0, 12), java.util.Set.copyOf(led.getNumberedList()));
        assertEquals(List.of("007"), led.getNamedList());
    }

    @Test
    void ledGroupsWithSinceGivesWhenEachLedGroupsNodeBecameLeaderInTheOrderOfTheLists() {
        server.nodes().register(new FakeNode("7", self, self, Configuration.parse(self + ",127.0.0.1:2")));
        server.nodes().register(new FakeNode("3", self, self, Configuration.parse(self + ",127.0.0.1:2")));
        server.nodes().register(new FakeNode("8", self, PeerId.parse("127.0.0.1:2"), Configuration.parse(self + ",127.0.0.1:2")));
        long since = java.time.Instant.parse("2026-01-02T03:04:05.123456Z").toEpochMilli(); // FakeNode's roleSince

        var led = admin.ledGroups(TIMEOUT, true);
        assertEquals(List.of(3, 7), led.getNumberedList());
        assertEquals(List.of(since, since), led.getNumberedSinceMsList());
        assertEquals(List.of("counter"), led.getNamedList());
        assertEquals(List.of(since), led.getNamedSinceMsList());

        var plain = admin.ledGroups(TIMEOUT);
        assertEquals(List.of(3, 7), plain.getNumberedList());
        assertEquals(0, plain.getNumberedSinceMsCount(), "without with_since no status is read");
    }

    @Test
    void onlyPlainDecimalIdsBelowTheLimitTravelAsNumbers() {
        assertEquals(0, AdminServiceImpl.numberedId("0"));
        assertEquals(99_999, AdminServiceImpl.numberedId("99999"));
        assertEquals(AdminServiceImpl.NUMBERED_LIMIT - 1, AdminServiceImpl.numberedId(Integer.toString(AdminServiceImpl.NUMBERED_LIMIT - 1)));
        // each of these would not come back as written, or is no number at all
        for (String id : List.of("", "00", "017", "-1", "+1", "1e3", "12a", "counter", " 1",
                Integer.toString(AdminServiceImpl.NUMBERED_LIMIT), "99999999", "999999999999")) {
            assertEquals(-1, AdminServiceImpl.numberedId(id), id);
        }
    }

    @Test
    void membershipOperationsReachTheNode() {
        assertTrue(admin.addPeer("counter", self.toString(), "127.0.0.1:4", TIMEOUT).getSuccess());
        assertTrue(admin.removePeer("counter", "", "127.0.0.1:3", TIMEOUT).getSuccess());
        assertTrue(admin.addLearners("counter", "", List.of("127.0.0.1:5"), TIMEOUT).getSuccess());
        assertTrue(admin.removeLearners("counter", "", List.of("127.0.0.1:5"), TIMEOUT).getSuccess());
        assertTrue(admin.changePeers("counter", "", List.of(self.toString(), "127.0.0.1:2"), List.of(), TIMEOUT).getSuccess());
        assertTrue(admin.transferLeader("counter", "", "127.0.0.1:2", TIMEOUT).getSuccess());
        assertEquals(List.of("addPeer 127.0.0.1:4", "removePeer 127.0.0.1:3", "addLearners [127.0.0.1:5]",
                "removeLearners [127.0.0.1:5]", "changePeers 127.0.0.1:2," + self, "transferLeadershipTo 127.0.0.1:2"), node.operations);
    }

    @Test
    void witnessAndPriorityOperationsReachTheNode() {
        assertTrue(admin.addWitness("counter", "", "127.0.0.1:6", TIMEOUT).getSuccess());
        assertTrue(admin.setPriority("counter", "", "127.0.0.1:2", 5, TIMEOUT).getSuccess());
        assertTrue(admin.setPriority("counter", "", "127.0.0.1:3", 0, TIMEOUT).getSuccess());
        assertEquals(List.of("addWitness 127.0.0.1:6", "setPriority 127.0.0.1:2 5", "setPriority 127.0.0.1:3 0"), node.operations);
    }

    @Test
    void negativePriorityIsInvalidArgumentAndNeverReachesTheNode() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> admin.setPriority("counter", "", "127.0.0.1:2", -1, TIMEOUT));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("-1"), e.getStatus().getDescription());
        assertTrue(node.operations.isEmpty());
    }

    @Test
    void aFollowerItsConfigurationMarksAsWitnessShowsRoleWitness() {
        PeerId witness = new PeerId(self.host(), self.port(), 2);
        FakeNode w = new FakeNode("counter", witness, self,
                Configuration.parse(self + "," + witness + "/witness,127.0.0.1:3"));
        server.nodes().register(w);
        NodeStatusResponse s = admin.status("counter", witness.toString(), TIMEOUT);
        assertEquals("witness", s.getRole());
        assertEquals(List.of(witness.toString()), s.getConfiguration().getWitnessesList());
        // the leader's own line is unchanged, and it sees the mark on the other member
        NodeStatusResponse leader = admin.status("counter", self.toString(), TIMEOUT);
        assertEquals("leader", leader.getRole());
    }

    @Test
    void failureOfTheOperationComesBackWithCodeAndLeaderHint() {
        node.leader = PeerId.parse("127.0.0.1:2");
        AdminResult r = admin.addPeer("counter", "", "127.0.0.1:4", TIMEOUT);
        assertFalse(r.getSuccess());
        assertEquals("NOT_LEADER", r.getError());
        assertEquals("127.0.0.1:2", r.getLeaderHint());
        AdminResult snapshot = admin.snapshot("counter", "", TIMEOUT);
        assertEquals("BUSY", snapshot.getError());
        assertTrue(snapshot.getMessage().contains("already"), snapshot.getMessage());
    }

    @Test
    void unknownGroupIsNotFound() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> admin.status("no-such-group", "", TIMEOUT));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("no-such-group"));
    }

    @Test
    void malformedPeerIsInvalidArgumentNamingIt() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> admin.addPeer("counter", "", "not-a-peer", TIMEOUT));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("not-a-peer"), e.getStatus().getDescription());
        assertTrue(node.operations.isEmpty());
    }

    @Test
    void ambiguousNodeSelectionIsInvalidArgument() {
        PeerId second = new PeerId(self.host(), self.port(), 1);
        server.nodes().register(new FakeNode("counter", second, second, Configuration.parse(second.toString())));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> admin.status("counter", "", TIMEOUT));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("leader", admin.status("counter", second.toString(), TIMEOUT).getRole());
    }
}
