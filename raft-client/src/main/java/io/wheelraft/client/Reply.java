package io.wheelraft.client;

/**
 * A successful answer with where it came from.
 *
 * @param result   what the state machine answered
 * @param index    a command's log index, or for a query the index of the last command its state includes
 *                 (pass it as a STALE read's {@code minIndex} to read your writes on any member)
 * @param servedBy the member ({@code host:port}) that answered
 */
public record Reply(byte[] result, long index, String servedBy) {
}
