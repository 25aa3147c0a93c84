package io.wheelraft.core.spi;

/**
 * An RPC did not produce an answer. {@link #kind()} says why; the message says where.
 *
 * <p>Carries no stack trace: a failed call is an expected outcome, reported through its future,
 * and where the future was failed says nothing the message does not. Filling one in cost real CPU
 * when thousands of groups' calls failed together (a peer process starting, or gone).
 */
public class TransportException extends RuntimeException {

    /** Why a call failed. */
    public enum Kind {
        /** The target could not be reached (connection refused or broken). */
        UNREACHABLE,
        /** No answer within the deadline. */
        TIMEOUT,
        /** The target does not host that group or peer. */
        NOT_FOUND,
        /** The target rejected the request as malformed or too large. */
        REJECTED,
        /** The transport is closed. */
        CLOSED
    }

    private final Kind kind;

    public TransportException(Kind kind, String message) {
        this(kind, message, null);
    }

    public TransportException(Kind kind, String message, Throwable cause) {
        super(message, cause, true, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
