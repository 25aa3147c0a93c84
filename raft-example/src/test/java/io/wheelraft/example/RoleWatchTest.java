package io.wheelraft.example;

import io.wheelraft.core.Configuration;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoleWatchTest {

    private static final PeerId SELF = PeerId.parse("127.0.0.1:7101");
    private static final PeerId OTHER = PeerId.parse("127.0.0.1:7102");

    /** The node as the watch sees it: a status, and the waits it was given, completed as the node would. */
    private final class Node {
        NodeStatus status = status(Role.FOLLOWER, 1, null, null);
        final List<Wait> waits = new ArrayList<>();

        record Wait(long term, PeerId leader, CompletableFuture<Void> future) {
        }

        CompletableFuture<Void> changeAfter(long term, PeerId leader) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            waits.add(new Wait(term, leader, f));
            if (status.term() != term || !Objects.equals(status.leader(), leader) || status.role() == Role.SHUTDOWN) {
                f.complete(null); // Node#leaderChange: at once when it already differs or the node has stopped
            }
            return f;
        }

        /** Publishes a new status and completes the waits it answers, as the node's LeaderWatch does. */
        void becomes(NodeStatus next) {
            status = next;
            for (Wait w : waits) {
                if (next.term() != w.term() || !Objects.equals(next.leader(), w.leader()) || next.role() == Role.SHUTDOWN) {
                    w.future().complete(null);
                }
            }
        }
    }

    private static NodeStatus status(Role role, long term, PeerId leader, Instant since) {
        return new NodeStatus("counter", SELF, role, term, leader, 0, 0, 1, 0, Configuration.empty(), Map.of(), since);
    }

    private final Node node = new Node();
    private final Queue<Runnable> watchThread = new ArrayDeque<>();
    private final Executor handOver = watchThread::add;
    private final List<String> lines = new ArrayList<>();
    private final RoleWatch watch = new RoleWatch(() -> node.status, node::changeAfter, handOver, lines::add);

    /** Runs what was handed to the watch's thread; a watch that keeps handing work over (a spin) fails here. */
    private void runWatchThread() {
        Runnable r;
        int ran = 0;
        while ((r = watchThread.poll()) != null) {
            r.run();
            assertTrue(++ran < 100, "the watch keeps handing itself work: it spins");
        }
    }

    @Test
    void logsEachChangeOfTermOrLeaderOnceAndWaitsForTheNextWithoutPolling() {
        watch.start();
        runWatchThread();
        assertEquals(1, lines.size());
        assertTrue(lines.get(0).matches("role change at \\S+: follower term=1 leader=none \\(was - term=0\\)"), lines.get(0));
        assertEquals(1, node.waits.size(), "one wait armed for the next change");

        Instant won = Instant.parse("2026-12-03T15:00:00.123456789Z");
        node.becomes(status(Role.CANDIDATE, 2, null, null));
        node.becomes(status(Role.LEADER, 2, SELF, won));
        runWatchThread();
        assertEquals(2, lines.size(), lines.toString());
        // The line is dated by the node's own record of when it took the role, and reads back as RoleLog expects.
        assertEquals("role change at " + won + ": leader term=2 leader=127.0.0.1:7101 (was follower term=1)", lines.get(1));

        node.becomes(status(Role.FOLLOWER, 3, OTHER, null));
        runWatchThread();
        assertEquals(3, lines.size());
        assertTrue(lines.get(2).contains(": follower term=3 leader=127.0.0.1:7102 (was leader term=2)"), lines.get(2));
        assertEquals(3, node.waits.size(), "one wait per change seen, never more");
        assertTrue(watchThread.isEmpty());
    }

    @Test
    void aRoleChangeThatMovesNeitherTermNorLeaderIsFoundByThePoll() {
        node.status = status(Role.LEARNER, 4, OTHER, null);
        watch.start();
        runWatchThread();
        node.becomes(status(Role.FOLLOWER, 4, OTHER, null)); // made a voter: same term, same leader
        runWatchThread();
        assertEquals(1, lines.size(), "no wait completes for it");
        watch.poll();
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).contains(": follower term=4 leader=127.0.0.1:7102 (was learner term=4)"), lines.get(1));
        watch.poll();
        assertEquals(2, lines.size(), "nothing new, nothing logged");
    }

    @Test
    void aStoppedNodeIsLoggedOnceAndNotWaitedOnAgain() {
        watch.start();
        runWatchThread();
        node.becomes(status(Role.SHUTDOWN, 1, null, null));
        runWatchThread();
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).contains(": shutdown term=1"), lines.get(1));
        int waits = node.waits.size();
        watch.poll();
        runWatchThread();
        assertEquals(waits, node.waits.size(), "a stopped node's wait completes at once: arming it again would spin");
        assertEquals(2, lines.size());
    }
}
