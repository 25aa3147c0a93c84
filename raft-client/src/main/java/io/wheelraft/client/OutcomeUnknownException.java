package io.wheelraft.client;

/**
 * A command may or may not have been applied: some attempt reached a server and no later attempt
 * confirmed the outcome before the deadline. Reading the state tells which; retrying with a new
 * call applies the command again if the first one did take effect.
 */
public final class OutcomeUnknownException extends RaftClientException {

    private static final long serialVersionUID = 1L;

    public OutcomeUnknownException(String message) {
        super(message);
    }
}
