package io.wheelraft.rpc;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.wheelraft.core.spi.TransportException;
import io.wheelraft.core.spi.TransportException.Kind;

/** Maps a failed gRPC call to the transport's {@link TransportException} kinds. Stateless. */
final class TransportErrors {

    private TransportErrors() {
    }

    static TransportException of(String what, Throwable error, boolean transportClosed) {
        if (transportClosed) {
            return new TransportException(Kind.CLOSED, what + " failed: transport is closed", error);
        }
        Status status = statusOf(error);
        if (status == null) {
            return new TransportException(Kind.UNREACHABLE, what + " failed: " + error, error);
        }
        Kind kind = switch (status.getCode()) {
            case DEADLINE_EXCEEDED -> Kind.TIMEOUT;
            case NOT_FOUND -> Kind.NOT_FOUND;
            case INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED,
                 PERMISSION_DENIED, UNAUTHENTICATED, INTERNAL, UNKNOWN, DATA_LOSS, ALREADY_EXISTS, ABORTED -> Kind.REJECTED;
                        default -> Kind.UNREACHABLE; // UNAVAILABLE and anything new
        };
        String description = status.getDescription() == null ? "" : ": " + status.getDescription();
        return new TransportException(kind, what + " failed with " + status.getCode() + description, error);
    }

    private static Status statusOf(Throwable t) {
        if (t instanceof StatusRuntimeException e) {
            return e.getStatus();
        }
        if (t instanceof StatusException e) {
            return e.getStatus();
        }
        return null;
    }
}
