package io.wheelraft.rpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;

import java.io.InputStream;

/**
 * Makes a service answer INVALID_ARGUMENT, naming what failed to parse, when a request's bytes are
 * not a valid message. (Left alone, gRPC closes such a call with UNKNOWN "Application error" and
 * logs a stack trace: a noisy log any client could cause.)
 *
 * <p>How: the request marshaller catches the parse failure, remembers it for the current thread
 * and yields null; an interceptor that sees the null message closes the call with the failure.
 * gRPC parses a message and hands it to the listener on the same thread, one after the other,
 * which is what makes the thread-local hand-over safe. Serialization is untouched. Stateless.
 */
final class MalformedRequests {

    private static final ThreadLocal<String> LAST_PARSE_ERROR = new ThreadLocal<>();

    private MalformedRequests() {
    }

    static ServerServiceDefinition rejectAsInvalidArgument(ServerServiceDefinition service) {
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
            b.addMethod(wrap(method));
        }
        return ServerInterceptors.intercept(b.build(), new RejectUnparsed());
    }

    private static <Q, R> ServerMethodDefinition<Q, R> wrap(ServerMethodDefinition<Q, R> method) {
        MethodDescriptor<Q, R> d = method.getMethodDescriptor();
        MethodDescriptor<Q, R> strict = d.toBuilder()
                .setRequestMarshaller(new Checked<>(d.getRequestMarshaller(), d.getFullMethodName()))
                .build();
        return ServerMethodDefinition.create(strict, method.getServerCallHandler());
    }

    /** Delegates to the generated marshaller; a parse failure becomes null plus a remembered reason. */
    private record Checked<T>(MethodDescriptor.Marshaller<T> delegate, String method) implements MethodDescriptor.Marshaller<T> {

        @Override
        public InputStream stream(T value) {
            return delegate.stream(value);
        }

        @Override
        public T parse(InputStream stream) {
            try {
                return delegate.parse(stream);
            } catch (RuntimeException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                LAST_PARSE_ERROR.set("malformed request to " + method + ": " + cause.getMessage());
                return null;
            }
        }
    }

    /** Closes a call whose request did not parse, instead of passing null on to the service. */
    private static final class RejectUnparsed implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
                private boolean rejected;

                @Override
                public void onMessage(Q message) {
                    if (rejected) {
                        return;
                    }
                    if (message == null) {
                        rejected = true;
                        String reason = LAST_PARSE_ERROR.get();
                        LAST_PARSE_ERROR.remove();
                        call.close(Status.INVALID_ARGUMENT.withDescription(reason == null ? "malformed request" : reason), new Metadata());
                        return;
                    }
                    super.onMessage(message);
                }

                @Override
                public void onHalfClose() {
                    if (!rejected) {
                        super.onHalfClose();
                    }
                }
            };
        }
    }
}
