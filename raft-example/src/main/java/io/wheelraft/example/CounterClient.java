package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import io.wheelraft.rpc.proto.counter.CounterResponse;
import io.wheelraft.rpc.proto.counter.GetRequest;
import io.wheelraft.rpc.proto.counter.IncrRequest;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A counter client: finds the leader, follows redirects, and retries through leader changes for
 * up to {@code timeoutMs} per command. Increments are exactly-once: each new increment takes the
 * next sequence number of this client's id, and every retry of it reuses that number, so the
 * state machine applies it at most once.
 *
 * <p>Outcomes are exact: {@link Outcome.Kind#FAIL} only when no attempt of the command can have
 * been applied (every attempt was refused before being appended, or never reached a node);
 * {@link Outcome.Kind#UNKNOWN} when some attempt may have been applied and no later retry
 * confirmed it.
 *
 * <p>Threading: one command at a time (methods are synchronized; a client's sequence numbers are
 * used in order). Run several clients, sharing one {@link ClusterChannels}, for concurrency.
 */
public final class CounterClient {

    /** How one command ended. */
    public record Outcome(Kind kind, long value, String reason, String servedBy) {
        /** ok, fail or unknown, as the command line prints them. */
        public enum Kind { OK, FAIL, UNKNOWN }

        public boolean ok() {
            return kind == Kind.OK;
        }

        /** {@code ok VALUE}, {@code fail REASON} or {@code unknown REASON}: the interactive answer line. */
        public String line() {
            return switch (kind) {
                case OK -> "ok " + value;
                case FAIL -> "fail " + reason;
                case UNKNOWN -> "unknown " + reason;
            };
        }
    }

    /** Pause after a round in which no node could name a leader (an election is running). */
    private static final long NO_LEADER_BACKOFF_MS = 15;

    private final ClusterChannels cluster;
    private final String clientId;
    private final long timeoutMs;
    private final long attemptTimeoutMs;
    private long lastSequence;
    private int next = ThreadLocalRandom.current().nextInt(1 << 16);

    /**
     * @param timeoutMs        how long one command may retry before answering unknown (or fail)
     * @param attemptTimeoutMs deadline of one attempt at one node (a paused node never answers)
     */
    public CounterClient(ClusterChannels cluster, long timeoutMs, long attemptTimeoutMs) {
        this(cluster, UUID.randomUUID().toString(), timeoutMs, attemptTimeoutMs);
    }

    public CounterClient(ClusterChannels cluster, String clientId, long timeoutMs, long attemptTimeoutMs) {
        if (timeoutMs <= 0 || attemptTimeoutMs <= 0) {
            throw new IllegalArgumentException("timeouts must be positive, were " + timeoutMs + " and " + attemptTimeoutMs);
        }
        this.cluster = cluster;
        this.clientId = clientId;
        this.timeoutMs = timeoutMs;
        this.attemptTimeoutMs = attemptTimeoutMs;
    }

    public String clientId() {
        return clientId;
    }

    /** Adds {@code delta}, exactly once. */
    public synchronized Outcome incr(long delta) {
        long sequence = ++lastSequence;
        IncrRequest request = IncrRequest.newBuilder().setGroupId(CounterServiceImpl.GROUP_ID).setClientId(clientId)
                .setSequence(sequence).setDelta(delta).build();
        return run(true, target -> cluster.counter(target.endpoint, target.deadlineMs).incr(request));
    }

    /** Reads the value linearizably. */
    public synchronized Outcome get() {
        GetRequest request = GetRequest.newBuilder().setGroupId(CounterServiceImpl.GROUP_ID).build();
        return run(false, target -> cluster.counter(target.endpoint, target.deadlineMs).get(request));
    }

    private record Target(String endpoint, long deadlineMs) {
    }

    private interface Call {
        CounterResponse send(Target target);
    }

    /**
     * Sends attempts until one answers OK, a final error comes back, or the time is up.
     *
     * @param write whether an attempt that may have reached a node can have changed the state
     */
    private Outcome run(boolean write, Call call) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        boolean mayHaveApplied = false;
        boolean reachedAny = false;
        String lastReason = "no attempt was made";
        List<String> peers = cluster.endpoints();
        int refusalsWithoutLeader = 0;
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMs <= 0) {
                break;
            }
            String guess = cluster.leaderGuess();
            String target = guess != null ? guess : peers.get(Math.floorMod(next++, peers.size()));
            boolean wasConnected = cluster.connected(target);
            try {
                CounterResponse r = call.send(new Target(target, Math.min(attemptTimeoutMs, remainingMs)));
                reachedAny = true;
                switch (r.getOutcome()) {
                    case COUNTER_OUTCOME_OK -> {
                        cluster.leaderIs(target);
                        return new Outcome(Outcome.Kind.OK, r.getValue(), "", target);
                    }
                    case COUNTER_OUTCOME_NOT_LEADER -> {
                        lastReason = "no leader: " + target + " answered " + r.getMessage();
                        String hint = r.getLeaderHint();
                        if (!hint.isEmpty() && !hint.equals(target)) {
                            cluster.leaderIs(hint);
                        } else {
                            cluster.notLeader(target);
                            if (++refusalsWithoutLeader % peers.size() == 0) {
                                pause(NO_LEADER_BACKOFF_MS);
                            }
                        }
                    }
                    case COUNTER_OUTCOME_FAILED -> {
                        lastReason = target + " refused: " + r.getMessage();
                        if (!retryable(r.getMessage())) {
                            return write && mayHaveApplied ? unknown(lastReason + " (an earlier attempt may have been applied)")
                                    : new Outcome(Outcome.Kind.FAIL, 0, lastReason, target);
                        }
                        cluster.notLeader(target);
                        pause(NO_LEADER_BACKOFF_MS);
                    }
                    default -> {
                        mayHaveApplied = true;
                        lastReason = target + " answered unknown: " + r.getMessage();
                        cluster.notLeader(target);
                    }
                }
            } catch (StatusRuntimeException e) {
                cluster.notLeader(target);
                cluster.reconnectSoon(target);
                io.grpc.Status.Code code = e.getStatus().getCode();
                lastReason = target + ": " + code + (e.getStatus().getDescription() == null ? "" : " " + e.getStatus().getDescription());
                boolean neverSent = code == io.grpc.Status.Code.UNAVAILABLE && !wasConnected || neverLeft(e.getStatus());
                if (!neverSent) {
                    // The request may have reached the node: a deadline, a connection that broke mid-call.
                    mayHaveApplied = true;
                    reachedAny = true;
                }
                if (++refusalsWithoutLeader % peers.size() == 0) {
                    pause(NO_LEADER_BACKOFF_MS);
                }
            }
        }
        if (write && mayHaveApplied) {
            return unknown("timed out after " + timeoutMs + " ms; the increment may or may not have been applied; last: " + lastReason);
        }
        if (!write && reachedAny) {
            // A read changes nothing, so a read that timed out certainly did not apply anything.
            return new Outcome(Outcome.Kind.FAIL, 0, "timed out after " + timeoutMs + " ms; last: " + lastReason, null);
        }
        return new Outcome(Outcome.Kind.FAIL, 0, (reachedAny ? "timed out after " + timeoutMs + " ms without a leader; last: "
                : "cluster unreachable: no node of " + String.join(",", peers) + " answered; last: ") + lastReason, null);
    }

    /**
     * A deadline that passed before the request left this process. gRPC says so in the text:
     * "waiting_for_connection" (the stream waited for a transport), or "Deadline ... will be
     * exceeded in" / "ClientCall started after" (the call never got past the channel's queue,
     * e.g. while the address was being resolved or the first connection made).
     */
    static boolean neverLeft(io.grpc.Status status) {
        String d = status.getDescription();
        return status.getCode() == io.grpc.Status.Code.DEADLINE_EXCEEDED && d != null
                && (d.contains("waiting_for_connection") || d.startsWith("Deadline CallOptions will be exceeded in")
                || d.startsWith("Deadline Context will be exceeded in") || d.startsWith("ClientCall started after"));
    }

    private static Outcome unknown(String reason) {
        return new Outcome(Outcome.Kind.UNKNOWN, 0, reason, null);
    }

    /** Refusals that happened before the entry was appended and may pass later. */
    private static boolean retryable(String message) {
        return message.startsWith("BUSY") || message.startsWith("LEADER_TRANSFERRING") || message.startsWith("TERM_MISMATCH");
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms + ThreadLocalRandom.current().nextLong(ms / 2 + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
