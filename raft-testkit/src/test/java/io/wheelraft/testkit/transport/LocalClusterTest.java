package io.wheelraft.testkit.transport;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.node.DefaultNodeRuntime;
import io.wheelraft.core.node.NodeImpl;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;
import io.wheelraft.timer.HashedWheelTimer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real threads, real time: three nodes on the production runtime (shared pools, Disruptor
 * proposal queue, the hashed wheel) over the in-process transport. Complements the
 * deterministic simulation, which runs everything on one thread.
 */
class LocalClusterTest {

    private static final int T = 300;

    private final HashedWheelTimer timer = new HashedWheelTimer();
    private final DefaultNodeRuntime runtime = new DefaultNodeRuntime(timer, 2, 2, 2);
    private final LocalNetwork network = new LocalNetwork(timer);
    private final List<NodeImpl> nodes = new ArrayList<>();
    private final List<Counter> counters = new ArrayList<>();

    private static final class Counter extends StateMachineAdapter {
        final AtomicLong value = new AtomicLong();

        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                long v = value.addAndGet(it.next().getLong(0));
                Closure done = it.done();
                if (done != null) {
                    done.run(Status.ok());
                }
            }
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (NodeImpl n : nodes) {
            n.shutdown(null);
            n.join(5, TimeUnit.SECONDS);
        }
        runtime.close();
        timer.stop();
    }

    private void startCluster() {
        List<PeerId> peers = List.of(new PeerId("a", 1), new PeerId("b", 2), new PeerId("c", 3));
        for (PeerId p : peers) {
            Counter fsm = new Counter();
            counters.add(fsm);
            NodeOptions o = new NodeOptions().electionTimeoutMs(T).initialConfiguration(new Configuration(peers))
                    .stateMachine(fsm).logStorage(new MemoryLogStorage()).metaStorage(new MemoryMetaStorage())
                    .snapshotStorage(new MemorySnapshotStorage()).timer(timer).snapshotIntervalSecs(0);
            nodes.add(new NodeImpl("g", p, o, network.transport(p.endpoint()), runtime).start());
        }
    }

    private int leader() {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).status().role() == io.wheelraft.core.Role.LEADER) {
                return i;
            }
        }
        return -1;
    }

    /** Polls {@code condition} until it holds or {@code timeoutMs} passes (a bound, not a guess at timing). */
    private static boolean await(BooleanSupplier condition, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            TimeUnit.MILLISECONDS.sleep(1); // poll interval of the condition wait
        }
        return condition.getAsBoolean();
    }

    @Test
    void electsReplicatesAndFailsOverOnRealThreads() throws InterruptedException {
        startCluster();
        assertTrue(await(() -> leader() >= 0, 20L * T), "no leader");
        int leader = leader();
        CountDownLatch acked = new CountDownLatch(300);
        AtomicInteger failed = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Status> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
        for (int k = 0; k < 300; k++) {
            nodes.get(leader).apply(new Task(ByteBuffer.allocate(8).putLong(0, 1), s -> {
                if (!s.isOk()) {
                    failed.incrementAndGet();
                    firstFailure.compareAndSet(null, s);
                }
                acked.countDown();
            }));
        }
        assertTrue(acked.await(20L * T, TimeUnit.MILLISECONDS), "not every task completed");
        assertEquals(0, failed.get(), "first failure: " + firstFailure.get());
        assertTrue(await(() -> counters.stream().allMatch(c -> c.value.get() == 300), 20L * T), "not applied everywhere");

        network.kill(nodes.get(leader).nodeId().endpoint());
        nodes.get(leader).halt();
        assertTrue(await(() -> leader() >= 0 && leader() != leader, 20L * T), "no new leader after the kill");
        int fresh = leader();
        assertNotEquals(leader, fresh);
        CountDownLatch one = new CountDownLatch(1);
        nodes.get(fresh).apply(new Task(ByteBuffer.allocate(8).putLong(0, 1), s -> one.countDown()));
        assertTrue(one.await(20L * T, TimeUnit.MILLISECONDS));
        assertTrue(await(() -> counters.get(fresh).value.get() == 301, 20L * T));
    }
}
