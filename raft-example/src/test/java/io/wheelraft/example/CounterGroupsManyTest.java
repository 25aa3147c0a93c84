package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.RocksDbMetaStorage;
import io.wheelraft.storage.RocksDbStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Thousands of single-member counter groups in one process: hosting them creates nothing on disk
 * per group (terms and votes live in the shared store), every group leads, and after a restart
 * every group comes back with the term it had.
 */
class CounterGroupsManyTest {

    private static final int GROUPS = 3000;

    @TempDir
    Path dir;

    @Test
    void thousandsOfGroupsAreHostedWithNothingOnDiskPerGroupAndComeBackWithTheirTerms() throws Exception {
        PeerId self = new PeerId("127.0.0.1", LocalCluster.freePorts(1).get(0));
        CounterGroups.Settings settings = new CounterGroups.Settings(dir, self, List.of(self), 300, 0, GROUPS);
        // group 7 ran before with its term and vote in a file of the earlier layout: they are taken over
        Path legacyMeta = dir.resolve("7").resolve("meta");
        try (FileMetaStorage legacy = FileMetaStorage.open(legacyMeta)) {
            legacy.setTermAndVote(41, self);
        }

        Map<String, Long> terms = new HashMap<>();
        try (CounterGroups engine = CounterGroups.start(settings, new SimpleMeterRegistry())) {
            assertEquals(GROUPS, engine.groupIds().size());
            LocalCluster.await("every group leads", 120_000, () -> engine.leading() == GROUPS);
            for (String g : engine.groupIds()) {
                terms.put(g, engine.node(g).status().term());
            }
        }
        assertTrue(terms.get("7") > 41, "group 7 went on from the term of its file, got " + terms.get("7"));
        assertFalse(Files.exists(legacyMeta), "the taken-over file is deleted");
        try (Stream<Path> children = Files.list(dir)) {
            List<String> names = children.map(p -> p.getFileName().toString()).filter(n -> !n.equals("7")).sorted().toList();
            assertEquals(List.of("log"), names, "nothing on disk per group but the shared store");
        }

        try (RocksDbStore store = RocksDbStore.open(dir.resolve("log"))) {
            assertEquals(GROUPS, store.metaGroupIds().size());
            for (int g = 0; g < GROUPS; g++) {
                try (RocksDbMetaStorage meta = store.metaStorage(CounterGroups.groupId(g))) {
                    assertEquals(terms.get(CounterGroups.groupId(g)), meta.term(), "stored term of group " + g);
                    assertEquals(self, meta.votedFor(), "stored vote of group " + g);
                }
            }
        }

        try (CounterGroups engine = CounterGroups.start(settings, new SimpleMeterRegistry())) {
            LocalCluster.await("every group leads again", 120_000, () -> engine.leading() == GROUPS);
            for (String g : engine.groupIds()) {
                long term = engine.node(g).status().term();
                assertTrue(term > terms.get(g), "group " + g + " restarted from its term " + terms.get(g) + ", now " + term);
            }
        }
    }

    @Test
    void aProcessThatIsNotAMemberStartsMoreGroupsThanThePacingLimitWithoutWaitingForThemToGoQuiet() throws Exception {
        List<Integer> ports = LocalCluster.freePorts(4);
        PeerId self = new PeerId("127.0.0.1", ports.get(0));
        List<PeerId> others = ports.subList(1, 4).stream().map(p -> new PeerId("127.0.0.1", p)).toList();
        int groups = 2 * CounterGroups.START_AWAKE_LIMIT; // paced as a member's, the second wave would wait for the first
        CounterGroups.Settings settings = new CounterGroups.Settings(dir, self, others, 300, 0, groups);
        try (CounterGroups engine = CounterGroups.start(settings, new SimpleMeterRegistry())) {
            assertEquals(groups, engine.groupIds().size());
            assertEquals(0, engine.startWaitedMs(), "a non-member's groups never campaign, so its start waits for none of them");
            for (String g : engine.groupIds()) {
                Node node = engine.node(g);
                assertFalse(node.isLeader(), "group " + g + " of a non-member leads nothing");
                assertTrue(node.status().configuration() == null || node.status().configuration().isEmpty(),
                        "group " + g + " waits to be added, with no members of its own: " + node.status().configuration());
            }
        }
    }
}
