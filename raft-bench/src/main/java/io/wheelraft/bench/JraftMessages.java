package io.wheelraft.bench;

import java.io.Serializable;

/**
 * The SOFAJRaft counter's RPC messages. Bolt serialises {@link Serializable} beans with Hessian,
 * so plain classes with a no-argument constructor are enough (no protobuf registration needed).
 */
final class JraftMessages {

    private JraftMessages() {
    }

    /** Add {@code delta} to the counter; served by the leader only. */
    static final class IncrementRequest implements Serializable {
        private static final long serialVersionUID = 1L;
        long delta;

        IncrementRequest() {
        }

        IncrementRequest(long delta) {
            this.delta = delta;
        }
    }

    /** The new value when {@code success}, else the leader to ask ({@code redirect}, may be null). */
    static final class IncrementResponse implements Serializable {
        private static final long serialVersionUID = 1L;
        boolean success;
        long value;
        String redirect;
        String error;

        IncrementResponse() {
        }

        static IncrementResponse ok(long value) {
            IncrementResponse r = new IncrementResponse();
            r.success = true;
            r.value = value;
            return r;
        }

        static IncrementResponse refused(String redirect, String error) {
            IncrementResponse r = new IncrementResponse();
            r.redirect = redirect;
            r.error = error;
            return r;
        }
    }
}
