package io.wheelraft.core.spi;

/**
 * Told by a {@link RaftTransport} about the liveness of remote endpoints (processes). Must not block.
 *
 * <p>A transport that {@link RaftTransport#reportsSilentPeers() reports silent peers} watches every
 * remote endpoint with one heartbeat per process pair, whatever the number of groups, and calls
 * {@link #onPeerSilent} when an endpoint goes silent without a reset (a partition, a stopped host,
 * or only a busy one). Only then may groups go quiet: a quiet group sends no heartbeats of its own
 * and relies on these reports to learn that its leader or a follower is gone.
 */
public interface ConnectionListener {

    /**
     * The connection to {@code endpoint} ({@code host:port}) broke, or the endpoint went silent:
     * the remote process most likely died or is cut off. Every peer hosted there is affected.
     * Reported once per loss, not repeated while the endpoint stays unreachable.
     */
    void onConnectionLost(String endpoint);

    /**
     * After its connection broke ({@link #onConnectionLost}), a new connection to {@code endpoint}
     * was refused: no process listens at that address now, so the one that served there is gone
     * (it died and its kernel closed its sockets) rather than cut off or only reconnecting. Stronger
     * than a break: nothing more can come from that process. Reported at most once per loss;
     * default: nothing. A transport that cannot tell need never call it.
     */
    default void onPeerGone(String endpoint) {
    }

    /**
     * {@code endpoint} has not answered the transport's liveness heartbeat for its silence window,
     * though its connection did not reset. Weaker than {@link #onConnectionLost}: the process may
     * only be slow, so it calls for the caution of a silent leader (an election timeout), not the
     * fast failover of a broken connection. Reported once per loss; default: nothing.
     */
    default void onPeerSilent(String endpoint) {
    }

    /**
     * {@code endpoint} answers again after it was reported lost or silent, or it restarted (a new process
     * at the same address) since it was last heard. Groups with a member there wake up so that
     * member is caught up. A listener that keeps no per-endpoint state may ignore it.
     */
    default void onConnectionRestored(String endpoint) {
    }
}
