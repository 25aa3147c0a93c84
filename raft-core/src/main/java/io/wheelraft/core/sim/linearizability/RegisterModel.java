package io.wheelraft.core.sim.linearizability;

import java.util.Objects;

/**
 * A read/write register's specification: {@code write(v)} replaces the value (its answer carries
 * nothing and is ignored); {@code read} returns the value. Immutable and thread-safe.
 *
 * @param <V> the value type; values must implement {@code equals}/{@code hashCode} and not be null
 */
public final class RegisterModel<V> implements Model<V, RegisterModel.Input<V>, V> {

    /** A request to the register: {@link Write} or {@link Read}. */
    public sealed interface Input<V> permits Write, Read {
    }

    /** Replaces the value with {@code value}. */
    public record Write<V>(V value) implements Input<V> {
        public Write {
            Objects.requireNonNull(value, "register value");
        }

        @Override
        public String toString() {
            return "write(" + value + ")";
        }
    }

    /** Reads the value. */
    public record Read<V>() implements Input<V> {
        @Override
        public String toString() {
            return "read";
        }
    }

    private final V initial;

    /** A register holding {@code initial} before any write. */
    public RegisterModel(V initial) {
        this.initial = Objects.requireNonNull(initial, "initial register value");
    }

    /** A write of {@code value}. */
    public static <V> Input<V> write(V value) {
        return new Write<>(value);
    }

    /** A read. */
    public static <V> Input<V> read() {
        return new Read<>();
    }

    @Override
    public V init() {
        return initial;
    }

    @Override
    public V step(V state, Input<V> input, V output) {
        if (input instanceof Write<V> write) {
            return write.value();
        }
        return state.equals(output) ? state : null;
    }

    @Override
    public V stepWithUnknownOutput(V state, Input<V> input) {
        return input instanceof Write<V> write ? write.value() : state;
    }

    @Override
    public boolean isReadOnly(Input<V> input) {
        return input instanceof Read;
    }

    @Override
    public String toString() {
        return "register(initial " + initial + ")";
    }
}
