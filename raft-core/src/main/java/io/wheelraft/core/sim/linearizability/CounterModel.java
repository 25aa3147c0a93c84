package io.wheelraft.core.sim.linearizability;

/**
 * The counter service's specification: a {@code long} starting at 0; {@code incr(delta)} adds
 * {@code delta} and returns the new value; {@code get} returns the value. Stateless and
 * thread-safe; use {@link #INSTANCE}.
 */
public final class CounterModel implements Model<Long, CounterModel.Input, Long> {

    /** The one instance (the model has no configuration). */
    public static final CounterModel INSTANCE = new CounterModel();

    /** A request to the counter: {@link Incr} or {@link Get}. */
    public sealed interface Input permits Incr, Get {
    }

    /** Adds {@code delta}; answers the new value. */
    public record Incr(long delta) implements Input {
        @Override
        public String toString() {
            return "incr(" + delta + ")";
        }
    }

    /** Reads the value. */
    public record Get() implements Input {
        @Override
        public String toString() {
            return "get";
        }
    }

    private static final Get GET = new Get();

    private CounterModel() {
    }

    /** An increment by {@code delta}. */
    public static Input incr(long delta) {
        return new Incr(delta);
    }

    /** A read. */
    public static Input get() {
        return GET;
    }

    @Override
    public Long init() {
        return 0L;
    }

    @Override
    public Long step(Long state, Input input, Long output) {
        if (output == null) {
            return null;
        }
        if (input instanceof Incr incr) {
            long next = state + incr.delta();
            return next == output ? next : null;
        }
        return state.longValue() == output ? state : null;
    }

    @Override
    public Long stepWithUnknownOutput(Long state, Input input) {
        return input instanceof Incr incr ? state + incr.delta() : state;
    }

    @Override
    public boolean isReadOnly(Input input) {
        return input instanceof Get;
    }

    @Override
    public String toString() {
        return "counter";
    }
}
