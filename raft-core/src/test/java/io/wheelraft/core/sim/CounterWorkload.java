package io.wheelraft.core.sim;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.History;

import java.util.Random;

/**
 * Simulated clients of the counter: each has one operation in flight, sends it to the node it
 * believes leads (following not-leader hints), and records invocation and outcome in a
 * {@link History}. A closure that never runs (its node died) or reports lost leadership is an
 * unknown outcome; a not-leader or busy answer means certainly not applied.
 */
final class CounterWorkload {

    private final SimCluster cluster;
    private final Random random;
    private final History<CounterModel.Input, Long> history;
    private final Client[] clients;
    private final int opTimeoutMs;
    /** One operation in this many is a write; the rest are reads (4: a read in four operations is a read, a third of them through the log). */
    private final int writeOneIn;
    private boolean running = true;
    private long acknowledged;

    private final class Client {
        final int id;
        int target;
        History.Invocation inflight;
        long sentAt;
        long nextAt;
        /** Bumped per attempt, so a late closure of an abandoned attempt is ignored. */
        long attempt;

        Client(int id) {
            this.id = id;
            this.target = random.nextInt(cluster.size());
        }

        void tick(long now) {
            if (inflight != null) {
                if (now - sentAt >= opTimeoutMs) {
                    history.timeout(inflight);
                    inflight = null;
                    attempt++;
                    target = random.nextInt(cluster.size());
                    nextAt = now + 1 + random.nextInt(20);
                }
                return;
            }
            // Clients skip witnesses: they hold no data, serve no reads and never lead.
            if (!running || now < nextAt || !cluster.isUp(target) || cluster.isWitness(target)) {
                if (!cluster.isUp(target) || cluster.isWitness(target)) {
                    target = random.nextInt(cluster.size());
                }
                return;
            }
            boolean read = writeOneIn == DEFAULT_MIX ? random.nextInt(4) == 0 : random.nextInt(writeOneIn) != 0;
            long delta = read ? 0 : 1 + random.nextInt(5);
            CounterModel.Input input = read ? CounterModel.get() : CounterModel.incr(delta);
            History.Invocation inv = history.invoke(id, input);
            inflight = inv;
            sentAt = now;
            long myAttempt = ++attempt;
            if (read && (writeOneIn != DEFAULT_MIX || random.nextInt(3) > 0)) {
                // A linearizable read by ReadIndex, on whichever node the client talks to (followers
                // ask the leader). The closure runs on the apply lane, so the value is consistent.
                CounterFsm fsm = (CounterFsm) cluster.stateMachine(target);
                cluster.node(target).readIndex((status, index) -> {
                    if (attempt == myAttempt && inflight == inv) {
                        finish(status, status.isOk() ? fsm.value() : null);
                    }
                });
                return;
            }
            cluster.node(target).apply(new Task(CounterFsm.delta(delta), new CounterFsm.Result((status, value) -> {
                if (attempt != myAttempt || inflight != inv) {
                    return;
                }
                finish(status, value);
            })));
        }

        void finish(Status status, Long value) {
            long now = cluster.nowMs();
            if (status.isOk()) {
                history.complete(inflight, value);
                acknowledged++;
            } else if (status.code() == RaftError.NOT_LEADER || status.code() == RaftError.BUSY) {
                history.fail(inflight);
                PeerId hint = status.leaderHint();
                target = hint != null ? indexOf(hint) : random.nextInt(cluster.size());
            } else {
                history.timeout(inflight); // e.g. leadership lost: may or may not be applied
                target = random.nextInt(cluster.size());
            }
            inflight = null;
            attempt++;
            nextAt = now + 1 + random.nextInt(30);
        }
    }

    private static final int DEFAULT_MIX = 0;

    /** Clients whose operations are mostly writes: one in four is a read, a third of those through the log. */
    CounterWorkload(SimCluster cluster, int clients, int opTimeoutMs) {
        this(cluster, clients, opTimeoutMs, DEFAULT_MIX);
    }

    /**
     * Clients that read far more than they write: one operation in {@code writeOneIn} is a write,
     * the others ReadIndex reads (so a group sits quiet between writes while it is read).
     */
    static CounterWorkload readMostly(SimCluster cluster, int clients, int opTimeoutMs, int writeOneIn) {
        if (writeOneIn < 2) {
            throw new IllegalArgumentException("a read-mostly load writes one operation in 2 or more, was " + writeOneIn);
        }
        return new CounterWorkload(cluster, clients, opTimeoutMs, writeOneIn);
    }

    private CounterWorkload(SimCluster cluster, int clients, int opTimeoutMs, int writeOneIn) {
        this.writeOneIn = writeOneIn;
        this.cluster = cluster;
        this.random = new Random(cluster.random().nextLong());
        this.history = new History<>(cluster::nowMs);
        this.opTimeoutMs = opTimeoutMs;
        this.clients = new Client[clients];
        for (int i = 0; i < clients; i++) {
            this.clients[i] = new Client(i);
        }
    }

    private int indexOf(PeerId p) {
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.peer(i).equals(p)) {
                return i;
            }
        }
        return random.nextInt(cluster.size());
    }

    /** Lets clients send what is due; call once per simulated millisecond. */
    void tick() {
        long now = cluster.nowMs();
        for (Client c : clients) {
            c.tick(now);
        }
    }

    /** Stops starting new operations (in-flight ones still finish or time out). */
    void stop() {
        running = false;
    }

    boolean idle() {
        for (Client c : clients) {
            if (c.inflight != null) {
                return false;
            }
        }
        return true;
    }

    History<CounterModel.Input, Long> history() {
        return history;
    }

    long acknowledged() {
        return acknowledged;
    }
}
