package io.wheelraft.example;

import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.NodeStatusResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StatusLinesTest {

    private static NodeStatusResponse node(String self, String role, long term, String leader, List<String> peers, List<String> oldPeers) {
        return NodeStatusResponse.newBuilder().setSelf(self).setRole(role).setTerm(term).setLeader(leader)
                .setCommitIndex(7).setLastLogIndex(9)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(peers).addAllOldPeers(oldPeers)).build();
    }

    private static final List<String> ABC = List.of("a:1", "b:2", "c:3");
    private static final List<String> AB = List.of("a:1", "b:2");

    @Test
    void aNodeThatDoesNotAnswerPrintsDownWithWhyAndNoMadeUpFigures() {
        List<String> lines = StatusLines.lines(List.of(
                StatusLines.Answer.of("a:1", node("a:1", "leader", 3, "", ABC, List.of())),
                StatusLines.Answer.down("b:2", "unreachable"),
                StatusLines.Answer.down("c:3", "no answer within 2000 ms")));
        assertEquals(List.of("a:1 leader term=3 commit=7 last=9 leader=a:1", "b:2 down (unreachable)", "c:3 down (no answer within 2000 ms)"), lines);
    }

    @Test
    void aNodeTheLeaderNoLongerListsIsRemoved() {
        // c was removed: it never received the final configuration, so its own still lists it (joint).
        List<String> lines = StatusLines.lines(List.of(
                StatusLines.Answer.of("a:1", node("a:1", "leader", 3, "", AB, List.of())),
                StatusLines.Answer.of("b:2", node("b:2", "follower", 3, "a:1", AB, List.of())),
                StatusLines.Answer.of("c:3", node("c:3", "follower", 3, "", AB, ABC))));
        assertEquals("b:2 follower term=3 commit=7 last=9 leader=a:1", lines.get(1));
        assertEquals("c:3 removed term=3 commit=7 last=9 leader=none", lines.get(2));
    }

    @Test
    void withoutALeaderANodeOutOfItsOwnLatestConfigurationIsRemoved() {
        List<String> lines = StatusLines.lines(List.of(
                StatusLines.Answer.down("a:1", "unreachable"),
                StatusLines.Answer.of("c:3", node("c:3", "follower", 3, "", AB, List.of())),
                StatusLines.Answer.of("b:2", node("b:2", "candidate", 4, "", AB, List.of()))));
        assertEquals("c:3 removed term=3 commit=7 last=9 leader=none", lines.get(1));
        assertEquals("b:2 candidate term=4 commit=7 last=9 leader=none", lines.get(2));
    }

    @Test
    void aWitnessPrintsRoleWitnessInTheSameLineFormatAndCanBeRemoved() {
        List<String> lines = StatusLines.lines(List.of(
                StatusLines.Answer.of("a:1", node("a:1", "leader", 3, "", ABC, List.of())),
                StatusLines.Answer.of("c:3", node("c:3", "witness", 3, "a:1", ABC, List.of()))));
        assertEquals("c:3 witness term=3 commit=7 last=9 leader=a:1", lines.get(1));
        List<String> afterRemoval = StatusLines.lines(List.of(
                StatusLines.Answer.of("a:1", node("a:1", "leader", 4, "", AB, List.of())),
                StatusLines.Answer.of("c:3", node("c:3", "witness", 3, "", ABC, List.of()))));
        assertEquals("c:3 removed term=3 commit=7 last=9 leader=none", afterRemoval.get(1));
    }

    @Test
    void aNodeWaitingToBeAddedIsNotRemoved() {
        List<String> lines = StatusLines.lines(List.of(
                StatusLines.Answer.of("a:1", node("a:1", "leader", 3, "", AB, List.of())),
                StatusLines.Answer.of("d:4", node("d:4", "follower", 0, "", List.of(), List.of()))));
        assertEquals("d:4 follower term=0 commit=7 last=9 leader=none", lines.get(1));
    }

    @Test
    void aLearnerOfTheLeadersConfigurationStaysALearner() {
        NodeStatusResponse leader = NodeStatusResponse.newBuilder().setSelf("a:1").setRole("leader").setTerm(3)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(AB).addLearners("d:4")).build();
        List<String> lines = StatusLines.lines(List.of(StatusLines.Answer.of("a:1", leader),
                StatusLines.Answer.of("d:4", node("d:4", "learner", 3, "a:1", AB, List.of()))));
        assertEquals("d:4 learner term=3 commit=7 last=9 leader=a:1", lines.get(1));
    }
}
