package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.Node;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.PreferredLeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three many-group engines in this JVM (one RocksDB store and one gRPC port each, real client):
 * groups are independent, and a group can be added and removed at run time while the others run.
 */
class CounterGroupsTest {

    @TempDir
    Path dir;

    private final List<CounterGroups> engines = new ArrayList<>();
    private List<PeerId> peers;
    private ClusterChannels channels;

    @BeforeEach
    void start() throws Exception {
        peers = LocalCluster.freePorts(3).stream().map(p -> new PeerId("127.0.0.1", p)).toList();
        for (int i = 0; i < 3; i++) {
            engines.add(CounterGroups.start(new CounterGroups.Settings(dir.resolve("n" + i), peers.get(i), peers, 300, 0, 3),
                    new SimpleMeterRegistry()));
        }
        channels = new ClusterChannels(Addresses.endpoints(peers));
    }

    @AfterEach
    void stop() {
        channels.close();
        engines.forEach(CounterGroups::close);
    }

    /** Waits until exactly one replica of {@code group} leads and the others know it. */
    private void awaitOneLeader(String group) throws TimeoutException, InterruptedException {
        LocalCluster.await("one leader of group " + group, 20_000, () -> {
            List<Node> nodes = engines.stream().map(e -> e.node(group)).filter(Objects::nonNull).toList();
            long leaders = nodes.stream().filter(Node::isLeader).count();
            return nodes.size() == 3 && leaders == 1 && nodes.stream().allMatch(n -> n.getLeaderId() != null);
        });
    }

    /**
     * Waits until every group is led by its preferred process (PreferredLeader): from then on no
     * hand-back moves a leadership, so counts read from the engines and from the summary agree.
     */
    private void awaitPreferredLeaders() throws TimeoutException, InterruptedException {
        List<PeerId> sorted = peers.stream().sorted().toList();
        for (String g : List.of("0", "1", "2")) {
            int preferred = peers.indexOf(PreferredLeader.of(g, sorted));
            LocalCluster.await("group " + g + " led by its preferred process " + peers.get(preferred), 20_000,
                    () -> engines.get(preferred).node(g).isLeader());
        }
    }

    private long value(String group) {
        CounterClient.Outcome o = new CounterClient(channels, group, 10_000, 1_000).get();
        assertTrue(o.ok(), o.line());
        return o.value();
    }

    @Test
    void everyGroupElectsItsOwnLeaderAndShareOneStoreAndOnePortPerProcess() throws Exception {
        for (String g : List.of("0", "1", "2")) {
            awaitOneLeader(g);
        }
        // A first election may pick a process the group does not prefer, which then hands the
        // leadership back: counted in between, the engine and the summary could disagree.
        awaitPreferredLeaders();
        // Counted while no leadership moves (a busy machine can still delay a heartbeat past a
        // timeout): each count is read again until it holds, and the wait fails naming it.
        LocalCluster.await("the three processes to lead three groups between them", 20_000,
                () -> engines.stream().mapToInt(CounterGroups::leading).sum() == 3);
        // one RocksDB store per process (one LOCK, in DATA/log) holding every group's log, term and vote;
        // no directory per group until it takes a snapshot
        for (int i = 0; i < 3; i++) {
            Path data = dir.resolve("n" + i);
            assertTrue(Files.exists(data.resolve("log").resolve("LOCK")));
            try (var files = Files.walk(data)) {
                assertEquals(1, files.filter(p -> p.getFileName().toString().equals("LOCK")).count(), "RocksDB instances in " + data);
            }
            for (String g : List.of("0", "1", "2")) {
                assertFalse(Files.exists(data.resolve(g)), "group directory " + data.resolve(g));
            }
        }
        assertEquals(3, channels.groupsSummary(peers.get(0).endpoint(), 5_000).getGroups());
        LocalCluster.await("process 0's summary to count the groups it leads", 20_000, () -> {
            int leading = engines.get(0).leading();
            return channels.groupsSummary(peers.get(0).endpoint(), 5_000).getLeaders() == leading && engines.get(0).leading() == leading;
        });
        for (CounterGroups e : engines) {
            LocalCluster.await("the leaderships " + e + "'s counters were told of to match its leaders", 20_000,
                    () -> e.leadershipsTold() == e.leading());
        }
    }

    /**
     * Each group's preferred process (PreferredLeader, spread by group id) leads it, and leadership
     * moved away by hand comes back to it: so a kill of one process fails over only the groups
     * that prefer it, whatever earlier failovers left it leading.
     */
    @Test
    void eachGroupIsLedByItsPreferredProcessAndLeadershipMovedAwayComesBack() throws Exception {
        awaitPreferredLeaders();
        int preferred = peers.indexOf(PreferredLeader.of("0", peers.stream().sorted().toList()));
        PeerId elsewhere = peers.get((preferred + 1) % 3);
        engines.get(preferred).node("0").transferLeadershipTo(elsewhere, st -> { });
        LocalCluster.await("group 0 led elsewhere after the transfer", 20_000,
                () -> engines.get((preferred + 1) % 3).node("0").isLeader());
        LocalCluster.await("group 0 led by its preferred process again", 20_000, () -> engines.get(preferred).node("0").isLeader());
    }

    @Test
    void aGroupAddedAtRunTimeServesWhileOthersRunAndARemovedOneLeavesThemUntouched() throws Exception {
        awaitOneLeader("0");
        assertEquals(4, new CounterClient(channels, "0", 10_000, 1_000).incr(4).value());

        for (CounterGroups e : engines) {
            e.addGroup("extra");
        }
        awaitOneLeader("extra");
        assertEquals(5, new CounterClient(channels, "extra", 10_000, 1_000).incr(5).value());
        assertEquals(4, value("0"), "a write to one group lands in no other");
        assertEquals(4, channels.groupsSummary(peers.get(1).endpoint(), 5_000).getGroups());

        CounterGroups extraLeader = engines.stream().filter(e -> e.node("extra").isLeader()).findFirst().orElseThrow();
        LocalCluster.await("the extra group's leader's counter told it leads", 20_000,
                () -> extraLeader.leadershipsTold() == extraLeader.leading());
        for (CounterGroups e : engines) {
            assertTrue(e.removeGroup("extra"));
            assertFalse(e.removeGroup("extra"));
            assertNull(e.node("extra"));
            assertEquals(Set.of("0", "1", "2"), e.groupIds());
        }
        assertEquals(3, channels.groupsSummary(peers.get(2).endpoint(), 5_000).getGroups());
        // A removed group it led no longer counts as led (were it left in, the two would differ by one for good).
        LocalCluster.await("leaderships told to match the leaders after the removal", 20_000,
                () -> extraLeader.leadershipsTold() == extraLeader.leading());
        assertEquals(5, new CounterClient(channels, "0", 10_000, 1_000).incr(1).value(), "the other groups go on");

        // its storage was released and kept: added again, the group recovers its count
        for (CounterGroups e : engines) {
            e.addGroup("extra");
        }
        awaitOneLeader("extra");
        assertEquals(5, value("extra"));
    }

    @Test
    void loadSpreadOverGroupsSharesOneStreamPerProcessAndLosesNothing() throws Exception {
        List<String> groups = List.of("0", "1", "2");
        for (String g : groups) {
            awaitOneLeader(g);
        }
        long[] streamsBefore = engines.stream().mapToLong(CounterGroups::clientStreamsOpened).toArray();
        LoadGenerator load = new LoadGenerator(channels, groups, 12, 10_000, 1_000, false);
        load.start();
        try {
            LocalCluster.await("300 increments spread over three groups", 30_000, () -> load.acked() >= 300);
        } finally {
            load.stop();
        }
        // Every group's client in this process shares one stream per server: three groups' calls,
        // one stream each (a client per group with its own connections opened one per group).
        for (int i = 0; i < 3; i++) {
            long opened = engines.get(i).clientStreamsOpened() - streamsBefore[i];
            assertTrue(opened <= 1, "client streams opened on " + peers.get(i) + ": " + opened);
        }
        long total = 0;
        for (String g : groups) {
            total += value(g);
        }
        assertTrue(total >= load.acked() && total <= load.acked() + load.unknown(),
                "counters add up to " + total + ", acknowledged " + load.acked() + ", unknown " + load.unknown());
        assertEquals(0, load.failed());
    }
}
