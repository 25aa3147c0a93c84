package io.wheelraft.core.spi;

/** Told by a {@link RaftTransport} when its connection to a remote endpoint breaks. Must not block. */
@FunctionalInterface
public interface ConnectionListener {

    /**
     * The connection to {@code endpoint} ({@code host:port}) broke: the remote process most
     * likely died. Every peer hosted there is affected.
     */
    void onConnectionLost(String endpoint);
}
