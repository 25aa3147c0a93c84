package io.wheelraft.client;

/**
 * Why a {@link RaftClient} call did not succeed. The subtype says what the caller may assume:
 * {@link NotAppliedException} (certainly not applied; {@link OverloadedException} when the servers
 * were too busy) or {@link OutcomeUnknownException} (may or may not have been applied). Immutable.
 */
public abstract class RaftClientException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    RaftClientException(String message) {
        // No stack trace: the message says what happened; a trace of the client's retry loop helps no one.
        super(message, null, false, false);
    }
}
