package io.wheelraft.core.sim;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.ConnectionListener;
import io.wheelraft.core.spi.RaftRequestHandler;
import io.wheelraft.core.spi.TransportException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The network between simulated processes: every message travels as a timeout on the simulation's
 * wheel, with a latency, and may be dropped, duplicated or reordered; processes can be partitioned,
 * crash (their connections break: peers are told, calls fail fast) or hang silently (calls time
 * out, nobody is told). All choices come from one seeded {@link Random}, so a run replays exactly.
 * Only the simulation thread uses it.
 */
public final class SimNetwork {

    private final SimRuntime runtime;
    private final Random random;
    private final SimFaults faults;
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, Integer> partitionOf = new HashMap<>();
    private long messagesSent;
    private long messagesDropped;
    /** Vote and pre-vote requests sent, by sending endpoint (tests check who campaigns). */
    private final Map<String, Long> voteRequestsSent = new HashMap<>();
    /** Raft requests sent, by target endpoint (tests check what still goes to a dead process). */
    private final Map<String, Long> requestsSentTo = new HashMap<>();

    /** One simulated OS process: an endpoint with its registered nodes and listeners. */
    static final class Process {
        final String endpoint;
        final Map<String, RaftRequestHandler> handlers = new HashMap<>();
        final List<ConnectionListener> listeners = new ArrayList<>();
        boolean alive = true;
        /** Dead without breaking connections (hung): calls to it time out instead of failing fast. */
        boolean silent;
        /** Bumped at every restart: the liveness watch tells a restarted process from one that never went away. */
        int incarnation;
        /** Added to the latency of every Raft answer it sends (not to liveness pings): see {@link #slowAnswersFrom}. */
        int answerDelayMs;

        Process(String endpoint) {
            this.endpoint = endpoint;
        }
    }

    /** The emulated per-process liveness watch ({@link #watchLiveness}); null when off. */
    private SimLiveness liveness;

    public SimNetwork(SimRuntime runtime, Random random, SimFaults faults) {
        this.runtime = runtime;
        this.random = random;
        this.faults = faults;
    }

    public SimFaults faults() {
        return faults;
    }

    /** The transport seen by the process at {@code endpoint} (created on first use). */
    public SimTransport transport(String endpoint) {
        processes.computeIfAbsent(endpoint, Process::new);
        return new SimTransport(this, endpoint);
    }

    Process process(String endpoint) {
        return processes.get(endpoint);
    }

    Iterable<Process> processes() {
        return processes.values();
    }

    Random random() {
        return random;
    }

    /**
     * Emulates a transport's per-process liveness watch (see
     * {@link io.wheelraft.core.spi.RaftTransport#reportsSilentPeers}): every {@code intervalMs}
     * each live process pings every other; one not heard for {@code silenceMs} (crashed, hung,
     * partitioned away, or its pings lost) is reported lost once, and reported restored when it
     * answers again or answers as a new incarnation. From then on the transports report silent peers.
     */
    public void watchLiveness(int intervalMs, int silenceMs) {
        if (liveness == null) {
            liveness = new SimLiveness(this, runtime, intervalMs, silenceMs);
            liveness.start();
        }
    }

    boolean watchesLiveness() {
        return liveness != null;
    }

    long silentPeerDetectMs() {
        return liveness == null ? Long.MAX_VALUE : liveness.detectMs();
    }

    private void reportedBroken(String at, String lost) {
        if (liveness != null) {
            liveness.markLost(at, lost);
        }
    }

    /**
     * The process dies. With {@code breakConnections} (a killed process: the OS resets its sockets)
     * every other process hears of it almost at once; without, it just goes silent (a hung process
     * or a cut cable) and calls to it time out.
     */
    public void crash(String endpoint, boolean breakConnections) {
        Process p = processes.get(endpoint);
        p.alive = false;
        p.silent = !breakConnections;
        p.handlers.clear();
        p.listeners.clear();
        if (breakConnections) {
            long incarnation = p.incarnation;
            for (Process other : processes.values()) {
                if (other != p && other.alive && connected(endpoint, other.endpoint)) {
                    reportedBroken(other.endpoint, endpoint);
                    List<ConnectionListener> ls = List.copyOf(other.listeners);
                    later(faults.connectionBreakDetectMs, () -> ls.forEach(l -> l.onConnectionLost(endpoint)));
                    if (faults.reportGonePeers) {
                        // The transport's probe after the break: a connection attempt refused one round trip later,
                        // unless the process is back by then (the attempt then connects, and nothing is reported).
                        later(faults.connectionBreakDetectMs + 2L * faults.maxLatencyMs, () -> {
                            if (!p.alive && p.incarnation == incarnation) {
                                ls.forEach(l -> l.onPeerGone(endpoint));
                            }
                        });
                    }
                }
            }
        }
    }

    /**
     * The connection between two live processes breaks and is re-established at once (a flapping
     * link, a proxy restart): each side's transport reports the loss of the other after
     * {@code connectionBreakDetectMs}, but no message is lost and both processes keep running.
     */
    public void breakConnection(String a, String b) {
        for (String[] side : new String[][] {{a, b}, {b, a}}) {
            Process p = processes.get(side[0]);
            if (p != null && p.alive) {
                List<ConnectionListener> ls = List.copyOf(p.listeners);
                String lost = side[1];
                reportedBroken(side[0], lost);
                later(faults.connectionBreakDetectMs, () -> ls.forEach(l -> l.onConnectionLost(lost)));
            }
        }
    }

    /** The process starts again (its nodes are re-created by the caller). */
    public void restart(String endpoint) {
        Process p = processes.get(endpoint);
        p.alive = true;
        p.silent = false;
        p.incarnation++;
    }

    /**
     * Every Raft answer the process at {@code endpoint} sends takes {@code extraMs} longer (0: back
     * to normal), while its liveness pings are answered as before: a process whose Raft work is
     * backed up (thousands of groups electing at once on saturated cores) while its transport
     * threads still answer the per-process watch.
     */
    public void slowAnswersFrom(String endpoint, int extraMs) {
        processes.get(endpoint).answerDelayMs = extraMs;
    }

    /** Splits processes into groups that cannot reach each other; unlisted ones form one more group. */
    @SafeVarargs
    public final void partition(List<String>... groups) {
        partitionOf.clear();
        for (int i = 0; i < groups.length; i++) {
            for (String e : groups[i]) {
                partitionOf.put(e, i + 1);
            }
        }
    }

    public void heal() {
        partitionOf.clear();
    }

    boolean connected(String a, String b) {
        return partitionOf.getOrDefault(a, 0).equals(partitionOf.getOrDefault(b, 0));
    }

    public long messagesSent() {
        return messagesSent;
    }

    public long messagesDropped() {
        return messagesDropped;
    }

    /** How many Raft requests of any kind were sent to {@code endpoint} (delivered or not). */
    public long requestsSentTo(String endpoint) {
        return requestsSentTo.getOrDefault(endpoint, 0L);
    }

    /** How many vote and pre-vote requests the process at {@code endpoint} has sent. */
    public long voteRequestsSentBy(String endpoint) {
        return voteRequestsSent.getOrDefault(endpoint, 0L);
    }

    void later(long delayMs, Runnable action) {
        runtime.timer().newTimeout(t -> action.run(), delayMs, TimeUnit.MILLISECONDS);
    }

    private int latency() {
        return faults.minLatencyMs + random.nextInt(faults.maxLatencyMs - faults.minLatencyMs + 1);
    }

    /**
     * Sends one request from {@code from} to {@code target} and routes the answer back, applying
     * every fault. The returned future always completes: with the answer, or exceptionally within
     * {@code timeoutMs}.
     */
    <Q, R> CompletableFuture<R> call(String from, PeerId target, String groupId, Q request, long timeoutMs,
                                     Function<RaftRequestHandler, CompletableFuture<R>> dispatch) {
        CompletableFuture<R> result = new CompletableFuture<>();
        messagesSent++;
        requestsSentTo.merge(target.endpoint(), 1L, Long::sum);
        if (request instanceof io.wheelraft.proto.RequestVoteRequest) {
            voteRequestsSent.merge(from, 1L, Long::sum);
        }
        later(timeoutMs, () -> result.completeExceptionally(
                new TransportException(TransportException.Kind.TIMEOUT, "no answer from " + target + " within " + timeoutMs + " ms")));
        String to = target.endpoint();
        Process dest = processes.get(to);
        if (dest == null || (!dest.alive && !dest.silent)) {
            later(faults.connectionBreakDetectMs, () -> result.completeExceptionally(
                    new TransportException(TransportException.Kind.UNREACHABLE, "connection to " + to + " refused")));
            return result;
        }
        int copies = random.nextDouble() < faults.duplicateRate ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            if (random.nextDouble() < faults.dropRate) {
                messagesDropped++;
                continue;
            }
            later(latency(), () -> deliver(from, target, groupId, dispatch, result));
        }
        return result;
    }

    /**
     * What the caller sees when the node refused a request: its own {@link TransportException}
     * as is (a stopped node's NOT_FOUND), anything else (a malformed request) as REJECTED with the
     * node's reason, as the gRPC transport does.
     */
    private static TransportException asTransportFailure(Throwable error, PeerId target) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof TransportException te) {
            return te;
        }
        return new TransportException(TransportException.Kind.REJECTED, "request rejected by " + target + ": " + cause.getMessage(), cause);
    }

    private <R> void deliver(String from, PeerId target, String groupId,
                             Function<RaftRequestHandler, CompletableFuture<R>> dispatch, CompletableFuture<R> result) {
        Process dest = processes.get(target.endpoint());
        Process src = processes.get(from);
        if (!dest.alive || !src.alive || !connected(from, target.endpoint())) {
            return; // lost in flight: the caller times out
        }
        RaftRequestHandler handler = dest.handlers.get(SimTransport.key(groupId, target));
        if (handler == null) {
            later(latency(), () -> result.completeExceptionally(
                    new TransportException(TransportException.Kind.NOT_FOUND, "no node " + groupId + "/" + target)));
            return;
        }
        dispatch.apply(handler).whenComplete((resp, err) -> {
            if (random.nextDouble() < faults.dropRate) {
                messagesDropped++;
                return;
            }
            later(latency() + dest.answerDelayMs, () -> {
                if (!src.alive || !dest.alive || !connected(from, target.endpoint())) {
                    return;
                }
                if (resp != null) {
                    result.complete(resp);
                } else {
                    result.completeExceptionally(asTransportFailure(err, target));
                }
            });
        });
    }
}
