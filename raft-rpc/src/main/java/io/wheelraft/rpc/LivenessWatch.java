package io.wheelraft.rpc;

import io.wheelraft.core.logging.RateLimitedLog;
import io.wheelraft.rpc.proto.PingRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The transport's liveness heartbeat: every {@link RpcOptions#livenessIntervalMs()} it sends one
 * ping to each remote endpoint the transport has a channel to, however many groups talk to it, and
 * reports an endpoint that gave no sign of life for {@link RpcOptions#livenessSilenceMs()} (see
 * {@link EndpointLiveness}). An endpoint is watched from the moment its channel is opened (by
 * {@code prepareConnection} or a first call) until the transport closes.
 *
 * <p>One periodic task on the transport's timer thread does it all, so the threads used depend on
 * neither endpoints nor groups. The pings to an endpoint are messages on one long-lived call
 * ({@link PingStream}): the task never waits for an answer. Each endpoint has at most one ping
 * under way, and one unanswered for the silence allowed ends its call, so a black-holed peer is
 * not sent a pile of them. Answers arrive on I/O threads.
 */
final class LivenessWatch {

    private static final Logger LOG = LoggerFactory.getLogger(LivenessWatch.class);

    private final ChannelPool channels;
    /** How far behind the I/O threads that read the peers' answers are. */
    private final IoLag ioLag;
    private final LongAdder ioLagged = new LongAdder();
    private final ScheduledExecutorService scheduler;
    private final long intervalMs;
    private final long silenceMs;
    private final RateLimitedLog tickFailures = new RateLimitedLog(LOG, RateLimitedLog.DEFAULT_INTERVAL_MS);
    private final LongAdder pingsSent = new LongAdder();
    private final LongAdder pingsAnswered = new LongAdder();
    /** When the last tick ran, and when one last ran late enough to show this process stalled (timer thread only). */
    private long lastTickNanos;
    private long listeningSinceNanos = Long.MIN_VALUE;
    private final LongAdder stalls = new LongAdder();
    private volatile PingRequest ping;
    /** How recent a peer's own round-trip ping must be for ours to be skipped: 1.5 intervals. */
    private final long theirPingsCountForNanos;
    /** Each endpoint's pings (timer thread only; channels live as long as the transport). */
    private final Map<String, PingStream> streams = new HashMap<>();
    private volatile boolean stopped;
    private ScheduledFuture<?> task;

    LivenessWatch(ChannelPool channels, ScheduledExecutorService scheduler, RpcOptions options, IoLag ioLag) {
        this.channels = channels;
        this.ioLag = ioLag;
        this.scheduler = scheduler;
        this.intervalMs = options.livenessIntervalMs();
        this.silenceMs = options.livenessSilenceMs();
        this.theirPingsCountForNanos = TimeUnit.MILLISECONDS.toNanos(intervalMs) * 3 / 2;
    }

    /** Starts pinging; {@code selfEndpoint} and {@code incarnation} identify this transport in its pings. */
    synchronized void start(String selfEndpoint, long incarnation) {
        ping = PingRequest.newBuilder().setEndpoint(selfEndpoint).setIncarnation(incarnation).build();
        try {
            task = scheduler.scheduleWithFixedDelay(this::tick, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            stopped = true; // closed before it started
        }
    }

    /** Stops pinging; answers still on their way are ignored by the silenced listeners. */
    synchronized void stop() {
        stopped = true;
        if (task != null) {
            task.cancel(false);
        }
    }

    /** Pings sent since start (tests and diagnostics). */
    long pingsSent() {
        return pingsSent.sum();
    }

    /** Ticks that ran late enough to show this process stalled (diagnostics). */
    long stalls() {
        return stalls.sum();
    }

    /** Checks made while the event loops were behind (diagnostics). */
    long ioLagged() {
        return ioLagged.sum();
    }

    /** Pings answered since start (tests and diagnostics). */
    long pingsAnswered() {
        return pingsAnswered.sum();
    }

    private void tick() {
        // A periodic task that throws is never run again: nothing may escape.
        try {
            long now = System.nanoTime();
            // A tick more than an interval late means this process stalled (a pause, a saturated
            // CPU): answers may be sitting unread in it, so silence is counted again from now.
            // Without this, a process starved for a moment reported every peer silent, which woke
            // every quiet group and loaded the CPU further.
            if (lastTickNanos != 0 && now - lastTickNanos > 2 * TimeUnit.MILLISECONDS.toNanos(intervalMs)) {
                listeningSinceNanos = now;
                stalls.increment();
            }
            // The same when the event loops that read the answers (and send the pings) fell more
            // than an interval behind: answers may be waiting unread, so each peer gets the whole
            // silence allowance again from the first check after they caught up. Whether they are
            // behind is asked only when a peer looks silent: a probe posted then must have run by
            // the next check before the peer is reported.
            if (ioLag.lagNanos(now) > 0) {
                listeningSinceNanos = now;
                ioLagged.increment();
            }
            long previousTick = lastTickNanos;
            lastTickNanos = now;
            long listeningSince = listeningSinceNanos;
            boolean[] due = {false};
            channels.forEach(remote -> due[0] |= remote.liveness().silentNow(now, listeningSince));
            boolean loopsAnswered = due[0] && previousTick != 0 && ioLag.answeredSince(previousTick);
            if (due[0]) {
                ioLag.probe(now);
            }
            channels.forEach(remote -> {
                if (!stopped) {
                    if (loopsAnswered) {
                        remote.liveness().checkSilence(now, listeningSince);
                    }
                    ping(remote, now);
                }
            });
        } catch (RuntimeException e) {
            tickFailures.warn(TimeUnit.NANOSECONDS.toMillis(System.nanoTime()), "liveness check failed; retrying in {} ms", intervalMs, e);
        }
    }

    /**
     * A round trip shown by the endpoint's own ping (see {@link LivenessService#watch}): its
     * liveness is updated as by an answer, and this process does not ping it while its pings keep
     * coming. Two watching processes then exchange about half the messages: one ping and one
     * answer per interval instead of two of each. Called on I/O threads.
     */
    void pingedBy(String endpoint, long incarnation) {
        if (ping == null || stopped) {
            return; // not watching: the peers' pings are answered and nothing more
        }
        ChannelPool.Remote remote = channels.peek(endpoint);
        if (remote != null) {
            remote.liveness().pingedUs(incarnation, System.nanoTime());
        }
        // else: no channel of ours to that endpoint (or it goes by another name here): it is not watched
    }

    private void ping(ChannelPool.Remote remote, long nowNanos) {
        // Half an interval of slack: a peer pinging once per interval of its own clock arrives a
        // little early or late against ours, and must not look as if it had skipped one.
        if (remote.liveness().pingedUsSince(nowNanos - theirPingsCountForNanos)) {
            return; // it proved the round trip itself within about the last interval
        }
        PingStream stream = streams.computeIfAbsent(remote.liveness().endpoint(),
                e -> new PingStream(remote.channel(), remote.liveness(), silenceMs, pingsAnswered));
        if (stream.ping(ping, nowNanos)) {
            pingsSent.increment();
        }
    }
}
