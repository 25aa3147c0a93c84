package io.wheelraft.example;

import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.Role;

import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Writes one line per change of a node's role, term or leader, with the moment it happened, in
 * the form {@link RoleLog} reads back ({@code role change at INSTANT: ROLE term=T leader=L (was
 * ROLE term=T)}); the chaos runner times failovers from these lines.
 *
 * <p>It waits on {@link Node#leaderChange} instead of asking the node every few milliseconds: a
 * poll every 10 ms woke each server 100 times a second and dated a change up to 10 ms late. A
 * change of term or leader completes the wait on the node's thread, which only notes the moment
 * and hands the rest to the watch's own thread. A change of role alone (a learner made a voter, a
 * repaired node back to follower) moves neither, so a slow poll ({@link #poll}, every
 * {@link #FALLBACK_POLL_MS}) still looks; such a line is dated by the node's own record of when it took the role
 * ({@link NodeStatus#roleSince()}) where it has one. Thread-safe: everything after the hand-over
 * runs on the one watch thread.
 */
final class RoleWatch {

    /** How often the status is read regardless, for role changes that move neither term nor leader. */
    static final long FALLBACK_POLL_MS = 1_000;

    private final Supplier<NodeStatus> status;
    private final BiFunction<Long, PeerId, CompletableFuture<Void>> changeAfter;
    private final Executor thread;
    private final Consumer<String> log;
    /** What was last logged; touched only on {@link #thread}. */
    private NodeStatus lastSeen;

    RoleWatch(Node node, Executor thread, Consumer<String> log) {
        this(node::status, node::leaderChange, thread, log);
    }

    /**
     * @param changeAfter {@link Node#leaderChange}: completes once term or leader differ from the given ones
     * @param thread      the watch's single thread (whoever calls {@link #poll} uses it too)
     * @param log         takes each line
     */
    RoleWatch(Supplier<NodeStatus> status, BiFunction<Long, PeerId, CompletableFuture<Void>> changeAfter,
              Executor thread, Consumer<String> log) {
        this.status = status;
        this.changeAfter = changeAfter;
        this.thread = thread;
        this.log = log;
    }

    /** Logs the current role and starts watching; call once. */
    void start() {
        thread.execute(() -> {
            look(Instant.now());
            arm();
        });
    }

    /** The fallback look for role changes that move neither term nor leader; call on the watch thread. */
    void poll() {
        look(Instant.now());
    }

    /** Waits for the next change of term or leader after what was last seen (on the watch thread). */
    private void arm() {
        NodeStatus seen = lastSeen;
        if (seen == null || ended(seen.role())) {
            return; // a stopped node has nothing more to say, and its wait would complete at once forever
        }
        CompletableFuture<Void> change;
        try {
            change = changeAfter.apply(seen.term(), seen.leader());
        } catch (RuntimeException e) {
            return; // the node is gone; the fallback poll still reports what it can
        }
        change.whenComplete((ignored, error) -> {
            Instant at = Instant.now(); // on the node's thread, right after the change was published
            try {
                thread.execute(() -> {
                    look(at);
                    arm();
                });
            } catch (RejectedExecutionException e) {
                // the watch was shut down
            }
        });
    }

    /** Reads the status and logs it if role, term or leader moved since the last line. */
    private void look(Instant seenAt) {
        NodeStatus now;
        try {
            now = status.get();
        } catch (RuntimeException e) {
            return;
        }
        NodeStatus before = lastSeen;
        if (before != null && before.role() == now.role() && before.term() == now.term() && Objects.equals(before.leader(), now.leader())) {
            return;
        }
        lastSeen = now;
        boolean roleMoved = before == null || before.role() != now.role() || before.term() != now.term();
        Instant at = roleMoved && now.roleSince() != null && now.roleSince().isBefore(seenAt) ? now.roleSince() : seenAt;
        log.accept(line(at, now, before));
    }

    static String line(Instant at, NodeStatus now, NodeStatus before) {
        return "role change at " + at + ": " + now.role().label() + " term=" + now.term() + " leader="
                + (now.leader() == null ? "none" : now.leader()) + " (was " + (before == null ? "-" : before.role().label())
                + " term=" + (before == null ? 0 : before.term()) + ")";
    }

    private static boolean ended(Role role) {
        return role == Role.SHUTDOWN || role == Role.ERROR;
    }
}
