package io.wheelraft.example;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two counter nodes and a witness in this JVM, driven through the command line: the witness runs
 * without the counter, {@code status} shows it as {@code witness}, clients work around it, and
 * {@code admin add-witness} / {@code set-priority} change a running cluster.
 */
class CounterWitnessTest {

    @TempDir
    Path dir;

    private final List<CounterServer> servers = new ArrayList<>();
    private List<PeerId> peers;
    private PeerId witness;

    @BeforeEach
    void startCluster() throws Exception {
        peers = LocalCluster.freePorts(3).stream().map(p -> new PeerId("127.0.0.1", p)).toList();
        witness = peers.get(2);
        for (int i = 0; i < 3; i++) {
            servers.add(start(peers.get(i), peers, List.of(witness)));
        }
        awaitDataLeader();
    }

    @AfterEach
    void stopCluster() {
        servers.forEach(CounterServer::close);
    }

    private CounterServer start(PeerId self, List<PeerId> members, List<PeerId> witnesses) {
        CounterServer s = CounterServer.start(new CounterServer.Settings(dir.resolve(self.endpoint().replace(':', '_')), self, members, 300, 0,
                witnesses, null), new SimpleMeterRegistry());
        return s;
    }

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    /**
     * Runs an admin command until it gets an answer from a leader (anything on standard output):
     * the priority just set may hand leadership over, and a command sent meanwhile finds no leader
     * and says so on standard error only.
     */
    private static CliRun runUntilAnswered(String... args) throws Exception {
        CliRun[] last = new CliRun[1];
        LocalCluster.await("an answer to " + String.join(" ", args), 10_000, () -> {
            last[0] = run(args);
            return !last[0].out().isEmpty();
        });
        return last[0];
    }

    private String list() {
        return String.join(",", Addresses.endpoints(peers));
    }

    /** Waits for the leader, which is a data member: a witness never leads. */
    private CounterServer awaitDataLeader() throws Exception {
        java.util.concurrent.atomic.AtomicReference<CounterServer> found = new java.util.concurrent.atomic.AtomicReference<>();
        LocalCluster.await("a leader", 20_000, () -> {
            servers.stream().filter(s -> s.status().role() == Role.LEADER).findFirst().ifPresent(found::set);
            return found.get() != null;
        });
        CounterServer leader = found.get();
        assertNotEquals(witness, leader.status().self(), "a witness never leads");
        return leader;
    }

    @Test
    void theWitnessRunsWithoutTheCounterStatusShowsItAndClientsGoAroundIt() throws Exception {
        assertNull(servers.get(2).stateMachine(), "a witness has no counter");
        CliRun incr = run("client", "--peers", list(), "incr", "5");
        assertEquals(0, incr.code(), incr.out());
        assertEquals("5\n", incr.out());
        // the witness listed first: the client learns what it is and reads from a data member
        CliRun get = run("client", "--peers", witness.endpoint() + "," + peers.get(0).endpoint() + "," + peers.get(1).endpoint(), "get");
        assertEquals("5\n", get.out());

        // The witness's line names the leader once the leader has reached it; on a loaded machine
        // its first connection to the witness (started last) can still be in reconnect backoff here.
        LocalCluster.await("the witness hearing from the leader", 10_000, () -> servers.get(2).status().leader() != null);
        CliRun status = run("status", "--peers", list());
        assertEquals(0, status.code());
        String[] lines = status.out().split("\n");
        assertEquals(3, lines.length, status.out());
        for (int i = 0; i < 2; i++) {
            assertTrue(lines[i].matches(java.util.regex.Pattern.quote(peers.get(i).endpoint())
                    + " (leader|follower) term=\\d+ commit=\\d+ last=\\d+ leader=\\S+:\\d+"), lines[i]);
        }
        assertTrue(lines[2].matches(java.util.regex.Pattern.quote(witness.endpoint())
                + " witness term=\\d+ commit=\\d+ last=\\d+ leader=\\S+:\\d+"), lines[2]);

        CliRun transfer = run("admin", "--peers", list(), "transfer-leader", witness.endpoint());
        assertEquals(1, transfer.code(), transfer.out());
        assertTrue(transfer.out().startsWith("fail ") && transfer.out().contains("witness"), transfer.out());
    }

    @Test
    void addWitnessAddsAWaitingWitnessAndSetPriorityChangesTheConfiguration() throws Exception {
        PeerId joining = new PeerId("127.0.0.1", LocalCluster.freePorts(1).get(0));
        servers.add(start(joining, peers, List.of(witness, joining)));
        assertNull(servers.get(3).stateMachine());

        CliRun added = run("admin", "--peers", list(), "add-witness", joining.endpoint());
        assertEquals(0, added.code(), added.out());
        assertEquals("ok added " + joining + " as a witness (the new configuration is committed)\n", added.out());
        CliRun again = run("admin", "--peers", list(), "add-witness", joining.endpoint());
        assertEquals("ok " + joining + " is already a witness; nothing changed\n", again.out());
        CliRun dataMember = run("admin", "--peers", list(), "add-witness", peers.get(1).endpoint());
        assertEquals(1, dataMember.code());
        assertTrue(dataMember.out().startsWith("fail ") && dataMember.out().contains("holding data"), dataMember.out());
        LocalCluster.await("the joined witness showing role witness", 10_000,
                () -> run("status", "--peers", joining.endpoint()).out().startsWith(joining.endpoint() + " witness "));

        CliRun priority = run("admin", "--peers", list(), "set-priority", peers.get(1).endpoint(), "0");
        assertEquals(0, priority.code(), priority.out());
        assertEquals("ok priority of " + peers.get(1) + " is 0 (the new configuration is committed)\n", priority.out());
        CounterServer leader = awaitDataLeader();
        Map<PeerId, Integer> priorities = leader.status().configuration().priorities();
        assertEquals(0, priorities.get(peers.get(1)));
        CliRun witnessPriority = runUntilAnswered("admin", "--peers", list(), "set-priority", joining.endpoint(), "3");
        assertEquals(1, witnessPriority.code());
        assertTrue(witnessPriority.out().contains("never leads"), witnessPriority.out() + witnessPriority.err());
        CliRun notMember = runUntilAnswered("admin", "--peers", list(), "set-priority", "127.0.0.1:1", "3");
        assertEquals(1, notMember.code());
        assertTrue(notMember.out().contains("not a member"), notMember.out() + notMember.err());

        // the counter still works with two witnesses of four members
        assertEquals("7\n", run("client", "--peers", list() + "," + joining.endpoint(), "incr", "7").out());
    }
}
