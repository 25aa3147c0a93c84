package io.wheelraft.example;

/**
 * Receives every increment a {@link LoadGenerator} worker sends: {@link #invoked} just before the
 * call, then exactly one of {@link #returned} or {@link #unknown} once it is over. Implementations
 * must be thread-safe: every worker calls them concurrently, each for its own operations.
 */
interface OperationLog {

    /** Logs nothing. */
    OperationLog NONE = new OperationLog() {
        @Override
        public Object invoked(int worker) {
            return null;
        }

        @Override
        public void returned(Object op, CounterClient.Outcome outcome, long latencyNanos) {
        }

        @Override
        public void unknown(Object op, long latencyNanos) {
        }
    };

    /** Worker {@code worker} is about to send an increment by one; returns a handle for its outcome. */
    Object invoked(int worker);

    /** The increment ended with {@code outcome} after {@code latencyNanos}. */
    void returned(Object op, CounterClient.Outcome outcome, long latencyNanos);

    /** The increment ended with an error of the client itself: it may or may not have been applied. */
    void unknown(Object op, long latencyNanos);
}
