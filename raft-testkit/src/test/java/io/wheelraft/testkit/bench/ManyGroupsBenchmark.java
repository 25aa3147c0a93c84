package io.wheelraft.testkit.bench;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.node.DefaultNodeRuntime;
import io.wheelraft.core.node.NodeImpl;
import io.wheelraft.core.storage.memory.MemoryLogStorage;
import io.wheelraft.core.storage.memory.MemoryMetaStorage;
import io.wheelraft.core.storage.memory.MemorySnapshotStorage;
import io.wheelraft.testkit.transport.LocalNetwork;
import io.wheelraft.timer.HashedWheelTimer;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Many Raft groups in one process (not run by CI; run with
 * {@code mvn -B -q -pl raft-testkit -am test -Dtest=ManyGroupsBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * -Dgroups.count=1000}). Three endpoints host one member of every group each, on one shared
 * runtime and wheel, with in-memory storage and the in-process transport. Prints: threads before
 * and after, heap per node, time until every group has a leader, and CPU used over an idle window.
 */
class ManyGroupsBenchmark {

    private static final class Noop extends StateMachineAdapter {
        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                it.next();
            }
        }
    }

    @Test
    void thousandsOfNodesShareOneWheelAndFewThreads() throws Exception {
        int groups = Integer.getInteger("groups.count", 1000);
        int idleSeconds = Integer.getInteger("groups.idleSeconds", 30);
        int electionTimeoutMs = Integer.getInteger("groups.electionTimeoutMs", 1000);
        var threads = ManagementFactory.getThreadMXBean();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

        HashedWheelTimer timer = new HashedWheelTimer();
        int cores = Runtime.getRuntime().availableProcessors();
        DefaultNodeRuntime runtime = new DefaultNodeRuntime(timer, Math.max(2, cores), 2, Math.max(2, cores));
        LocalNetwork network = new LocalNetwork(timer);
        List<PeerId> peers = List.of(new PeerId("a", 1), new PeerId("b", 2), new PeerId("c", 3));
        System.gc();
        long heapBefore = memory.getHeapMemoryUsage().getUsed();
        int threadsBefore = threads.getThreadCount();

        long start = System.nanoTime();
        List<NodeImpl> nodes = new ArrayList<>(groups * 3);
        for (int g = 0; g < groups; g++) {
            for (PeerId p : peers) {
                NodeOptions o = new NodeOptions().electionTimeoutMs(electionTimeoutMs).initialConfiguration(new Configuration(peers))
                        .stateMachine(new Noop()).logStorage(new MemoryLogStorage()).metaStorage(new MemoryMetaStorage())
                        .snapshotStorage(new MemorySnapshotStorage()).timer(timer).snapshotIntervalSecs(0);
                nodes.add(new NodeImpl("group-" + g, p, o, network.transport(p.endpoint()), runtime).start());
            }
        }
        long created = System.nanoTime();
        int led;
        do {
            TimeUnit.MILLISECONDS.sleep(10); // sampling interval of the measurement
            led = 0;
            for (int g = 0; g < groups; g++) {
                for (int k = 0; k < 3; k++) {
                    if (nodes.get(g * 3 + k).status().role() == Role.LEADER) {
                        led++;
                        break;
                    }
                }
            }
        } while (led < groups && System.nanoTime() - created < TimeUnit.SECONDS.toNanos(120));
        long allLed = System.nanoTime();
        int threadsAfter = threads.getThreadCount();
        System.gc();
        long heapAfter = memory.getHeapMemoryUsage().getUsed();

        long cpuBefore = os.getProcessCpuTime();
        long wallBefore = System.nanoTime();
        TimeUnit.SECONDS.sleep(idleSeconds); // the idle window being measured
        long cpu = os.getProcessCpuTime() - cpuBefore;
        long wall = System.nanoTime() - wallBefore;

        System.out.printf("[groups] %d groups x 3 = %d nodes, election timeout %d ms, %d cores%n", groups, groups * 3, electionTimeoutMs, cores);
        System.out.printf("[groups] threads: %d before, %d after (JVM + wheel + raft/disk/apply pools + proposal consumer)%n", threadsBefore, threadsAfter);
        System.out.printf("[groups] heap: %.1f KiB per node (%.1f MiB total)%n", (heapAfter - heapBefore) / 1024.0 / (groups * 3),
                (heapAfter - heapBefore) / 1024.0 / 1024.0);
        System.out.printf("[groups] created in %d ms; every group led %d ms after creation (%d of %d led)%n",
                TimeUnit.NANOSECONDS.toMillis(created - start), TimeUnit.NANOSECONDS.toMillis(allLed - created), led, groups);
        System.out.printf("[groups] idle (heartbeats only) for %d s: %.1f%% of one core (%.2f s CPU)%n", idleSeconds,
                100.0 * cpu / wall, cpu / 1e9);
        for (NodeImpl n : nodes) {
            n.halt();
        }
        runtime.close();
        timer.stop();
    }
}
