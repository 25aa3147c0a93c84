package io.wheelraft.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

import java.io.InputStream;

/**
 * Makes a service answer INVALID_ARGUMENT (with what failed to parse) when a request's bytes are
 * not a valid message, instead of gRPC's default INTERNAL. Serialization is untouched. Stateless.
 */
final class MalformedRequests {

    private MalformedRequests() {
    }

    static ServerServiceDefinition rejectAsInvalidArgument(ServerServiceDefinition service) {
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
            b.addMethod(wrap(method));
        }
        return b.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> wrap(ServerMethodDefinition<Q, R> method) {
        MethodDescriptor<Q, R> d = method.getMethodDescriptor();
        MethodDescriptor<Q, R> strict = d.toBuilder()
                .setRequestMarshaller(new Checked<>(d.getRequestMarshaller(), d.getFullMethodName()))
                .build();
        return ServerMethodDefinition.create(strict, method.getServerCallHandler());
    }

    /** Delegates to the generated marshaller; turns its parse failure into INVALID_ARGUMENT. */
    private record Checked<T>(MethodDescriptor.Marshaller<T> delegate, String method) implements MethodDescriptor.Marshaller<T> {

        @Override
        public InputStream stream(T value) {
            return delegate.stream(value);
        }

        @Override
        public T parse(InputStream stream) {
            try {
                return delegate.parse(stream);
            } catch (StatusRuntimeException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                throw Status.INVALID_ARGUMENT
                        .withDescription("malformed request to " + method + ": " + cause.getMessage())
                        .asRuntimeException();
            } catch (RuntimeException e) {
                throw Status.INVALID_ARGUMENT
                        .withDescription("malformed request to " + method + ": " + e)
                        .asRuntimeException();
            }
        }
    }
}
