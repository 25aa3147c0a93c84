package io.wheelraft.example;

import io.wheelraft.client.NotAppliedException;
import io.wheelraft.client.OutcomeUnknownException;
import io.wheelraft.client.RaftClient;
import io.wheelraft.client.RaftClientException;
import io.wheelraft.client.ReadMode;
import io.wheelraft.client.Reply;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The counter's command-line client, on raft-client's {@link RaftClient}: the library finds the
 * leader, follows redirects, retries through leader changes for up to {@code timeoutMs} per
 * command and makes increments exactly-once; this class only turns answers and typed failures
 * into the command line's {@code ok / fail / unknown} outcomes.
 *
 * <p>Outcomes are exact: {@link Outcome.Kind#FAIL} only when no attempt can have been applied
 * ({@link NotAppliedException}); {@link Outcome.Kind#UNKNOWN} when some attempt may have been
 * ({@link OutcomeUnknownException}). A read that finds no answer in time changed nothing, so it
 * is a FAIL.
 *
 * <p>Thread-safe: every method may be called from any thread; all clients made from one
 * {@link ClusterChannels} share one {@link RaftClient} (one stream per server).
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

    /** The longest a silent leader is waited for before the other members are asked who leads. */
    static final long MAX_SILENCE_MS = 300;

    private final RaftClient client;
    private final Duration timeout;

    /**
     * @param timeoutMs        how long one command may retry before answering unknown (or fail)
     * @param attemptTimeoutMs how long the believed leader may stay silent before the client asks the others who leads
     *                         (at most {@link #MAX_SILENCE_MS}: asking is cheap, and the calls move only when
     *                         another member names a different leader)
     */
    public CounterClient(ClusterChannels cluster, long timeoutMs, long attemptTimeoutMs) {
        this(cluster, CounterServiceImpl.GROUP_ID, timeoutMs, attemptTimeoutMs);
    }

    /** A client of counter group {@code groupId} (a server started with {@code --groups} hosts {@code 0..N-1}). */
    public CounterClient(ClusterChannels cluster, String groupId, long timeoutMs, long attemptTimeoutMs) {
        if (timeoutMs <= 0 || attemptTimeoutMs <= 0) {
            throw new IllegalArgumentException("timeouts must be positive, were " + timeoutMs + " and " + attemptTimeoutMs);
        }
        this.client = cluster.counterClient(groupId, Math.min(attemptTimeoutMs, MAX_SILENCE_MS));
        this.timeout = Duration.ofMillis(timeoutMs);
    }

    public String clientId() {
        return client.clientId();
    }

    /** Adds {@code delta}, exactly once. */
    public Outcome incr(long delta) {
        return await(incrAsync(delta));
    }

    /** Adds {@code delta}, exactly once, without waiting; the future never fails (failures are outcomes). */
    public CompletableFuture<Outcome> incrAsync(long delta) {
        return client.submitAsync(CounterStateMachine.encode(delta), timeout).handle(CounterClient::outcome);
    }

    /**
     * Reads the value linearizably. A read changes nothing, so one that did not complete certainly
     * applied nothing: it is a FAIL, never UNKNOWN.
     */
    public Outcome get() {
        Outcome o = await(client.queryAsync(new byte[0], ReadMode.LINEARIZABLE, 0, timeout).handle(CounterClient::outcome));
        return o.kind() == Outcome.Kind.UNKNOWN ? new Outcome(Outcome.Kind.FAIL, 0, o.reason(), o.servedBy()) : o;
    }

    private static Outcome await(CompletableFuture<Outcome> f) {
        return f.join();
    }

    private static Outcome outcome(Reply reply, Throwable error) {
        if (error == null) {
            return new Outcome(Outcome.Kind.OK, CounterStateMachine.decodeValue(reply.result()), "", reply.servedBy());
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof NotAppliedException) {
            return new Outcome(Outcome.Kind.FAIL, 0, cause.getMessage(), null);
        }
        if (cause instanceof RaftClientException) {
            return new Outcome(Outcome.Kind.UNKNOWN, 0, cause.getMessage(), null);
        }
        return new Outcome(Outcome.Kind.UNKNOWN, 0, "client error: " + cause, null);
    }
}
