package io.wheelraft.rpc;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.RaftRuntime;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;
import io.wheelraft.timer.HashedWheelTimer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many groups over one gRPC transport per process: every group's traffic to a peer process shares
 * one channel (one connection), and groups start and stop at run time without touching the others.
 */
class ManyGroupsTransportTest {

    private static final int GROUPS = 12;

    private final HashedWheelTimer timer = new HashedWheelTimer();
    private final RaftRuntime runtime = RaftRuntime.create(timer, 2, 2, 2);
    private final List<GrpcRaftTransport> transports = new ArrayList<>();
    private final List<PeerId> peers = new ArrayList<>();
    /** group id -> its three nodes, in the order of {@link #peers} */
    private final Map<String, List<RaftGroupService>> groups = new LinkedHashMap<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (List<RaftGroupService> g : groups.values()) {
            for (RaftGroupService s : g) {
                s.shutdown(5_000);
            }
        }
        transports.forEach(GrpcRaftTransport::close);
        runtime.close();
        timer.stop();
    }

    private static final class Noop extends StateMachineAdapter {
        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                it.next();
            }
        }
    }

    private void startGroup(String id) {
        List<RaftGroupService> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            NodeOptions o = new NodeOptions().electionTimeoutMs(300).initialConfiguration(new Configuration(peers))
                    .stateMachine(new Noop()).logStorage(new MemoryLogStorage()).metaStorage(new MemoryMetaStorage())
                    .snapshotStorage(new MemorySnapshotStorage()).snapshotIntervalSecs(0);
            RaftGroupService s = new RaftGroupService(id, peers.get(i), o, transports.get(i), runtime);
            transports.get(i).nodes().register(s.start());
            members.add(s);
        }
        groups.put(id, members);
    }

    private void stopGroup(String id) throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            RaftGroupService s = groups.get(id).get(i);
            transports.get(i).nodes().unregister(s.node());
            assertTrue(s.shutdown(5_000));
        }
        groups.remove(id);
    }

    private boolean hasOneLeader(String id) {
        return groups.get(id).stream().map(RaftGroupService::node).filter(Node::isLeader).count() == 1;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + " did not happen within 20 s");
            TimeUnit.MILLISECONDS.sleep(5); // poll interval
        }
    }

    @Test
    void groupsShareOneChannelPerPeerProcessAndComeAndGoAtRunTime() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            GrpcRaftTransport t = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
            transports.add(t);
            peers.add(new PeerId("127.0.0.1", t.port()));
        }
        for (int g = 0; g < GROUPS; g++) {
            startGroup("g" + g);
        }
        await("a leader in every group", () -> groups.keySet().stream().allMatch(this::hasOneLeader));
        for (GrpcRaftTransport t : transports) {
            assertEquals(2, t.outboundChannels(), "outbound channels of " + t.endpoint() + " with " + GROUPS + " groups");
            assertTrue(t.inboundConnections() >= 1 && t.inboundConnections() <= 2, "inbound connections of " + t.endpoint() + ": " + t.inboundConnections());
        }

        startGroup("late");
        await("a leader in the group started at run time", () -> hasOneLeader("late"));
        stopGroup("g0");
        stopGroup("late");
        for (GrpcRaftTransport t : transports) {
            int[] hosted = {0};
            t.nodes().forEachNode(n -> hosted[0]++);
            assertEquals(GROUPS - 1, hosted[0]);
            assertEquals(2, t.outboundChannels());
        }
        // the groups that stay keep their leaders
        await("every remaining group still led", () -> groups.keySet().stream().allMatch(this::hasOneLeader));
        startGroup("g0"); // the same id again, fresh storage
        await("the restarted group led again", () -> hasOneLeader("g0"));
    }
}
