package io.wheelraft.rpc;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Watches one outbound channel: reports a broken connection, and reconnects with our own short
 * exponential backoff instead of gRPC's (which waits up to two minutes, far too long for Raft).
 *
 * <p>A connection that was READY and drops leaves the channel IDLE; the watcher reconnects at
 * once, so a peer whose process died shows up as TRANSIENT_FAILURE (connection refused) within
 * milliseconds and is reported then, while a benign reconnect (the peer sent GOAWAY and is still
 * there) goes back to READY and is not reported. Each break is reported once, until the channel
 * is READY again. State callbacks come from gRPC threads, one at a time per channel.
 *
 * <p>Reconnecting is driven by our own timer, not by state callbacks: gRPC keeps reporting
 * TRANSIENT_FAILURE while it retries a failed connection ("sticky" TRANSIENT_FAILURE), so a
 * refused attempt brings no callback. Waiting for one left a channel to a restarted peer on
 * gRPC's backoff (1 s, then 1.6 s, ...): in the chaos runs a follower's channel to a peer that had
 * been back for seconds still failed every call at once, so its pre-vote counted a refusal and
 * the election lost a round. Until the channel is READY again we nudge it on every backoff step.
 */
final class OutboundConnectionWatcher {

    private final String endpoint;
    private final ManagedChannel channel;
    private final ConnectionListeners listeners;
    private final ScheduledExecutorService scheduler;
    private final long backoffMinMs;
    private final long backoffMaxMs;

    private boolean wasReady;
    private long nextBackoffMs;
    /** A retry is scheduled; TRANSIENT_FAILURE reported again meanwhile must not add another. */
    private boolean retryScheduled;

    OutboundConnectionWatcher(String endpoint, ManagedChannel channel, ConnectionListeners listeners,
                              ScheduledExecutorService scheduler, RpcOptions options) {
        this.endpoint = endpoint;
        this.channel = channel;
        this.listeners = listeners;
        this.scheduler = scheduler;
        this.backoffMinMs = options.reconnectBackoffMinMs();
        this.backoffMaxMs = options.reconnectBackoffMaxMs();
        this.nextBackoffMs = backoffMinMs;
    }

    void start() {
        watch(channel.getState(false));
    }

    private void watch(ConnectivityState seen) {
        if (channel.isShutdown()) {
            return;
        }
        channel.notifyWhenStateChanged(seen, this::onStateChange);
    }

    private synchronized void onStateChange() {
        if (channel.isShutdown()) {
            return;
        }
        ConnectivityState state = channel.getState(false);
        switch (state) {
            case READY -> {
                wasReady = true;
                nextBackoffMs = backoffMinMs;
            }
            case IDLE -> {
                if (wasReady) {
                    // The connection dropped. Reconnect now: either it comes back (benign) or the
                    // attempt fails and TRANSIENT_FAILURE reports the break.
                    channel.getState(true);
                }
            }
            case TRANSIENT_FAILURE -> {
                if (wasReady) {
                    wasReady = false;
                    listeners.fireLost(endpoint, "outbound channel failed");
                }
                scheduleRetry();
            }
            default -> {
                // CONNECTING: wait for the outcome. SHUTDOWN: handled above.
            }
        }
        watch(state);
    }

    private void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        long delay = nextBackoffMs;
        nextBackoffMs = Math.min(backoffMaxMs, nextBackoffMs * 2);
        try {
            scheduler.schedule(this::retry, delay, TimeUnit.MILLISECONDS);
            retryScheduled = true;
        } catch (RejectedExecutionException e) {
            // The transport is closing: its channels go with it.
        }
    }

    /** One backoff step passed: reconnect now if the channel is still failing, and plan the next step. */
    private synchronized void retry() {
        retryScheduled = false;
        if (channel.isShutdown() || channel.getState(false) != ConnectivityState.TRANSIENT_FAILURE) {
            return; // READY, or it left the failure state: the state callback takes over
        }
        channel.resetConnectBackoff(); // no-op while an attempt is under way
        scheduleRetry();
    }
}
