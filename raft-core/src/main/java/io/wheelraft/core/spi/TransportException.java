package io.wheelraft.core.spi;

/** An RPC did not produce an answer. {@link #kind()} says why; the message says where. */
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
        super(message);
        this.kind = kind;
    }

    public TransportException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
