package io.wheelraft.core;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A command to replicate: its bytes, the closure to complete once it is applied (or failed),
 * and optionally the leader term it must be appended in ({@code -1}: any term).
 */
public final class Task {

    private final ByteBuffer data;
    private final Closure done;
    private final long expectedTerm;

    public Task(ByteBuffer data, Closure done) {
        this(data, done, -1);
    }

    public Task(ByteBuffer data, Closure done, long expectedTerm) {
        this.data = Objects.requireNonNull(data, "task data");
        this.done = done;
        this.expectedTerm = expectedTerm;
    }

    public ByteBuffer data() {
        return data;
    }

    /** May be null when the caller does not need to hear the outcome. */
    public Closure done() {
        return done;
    }

    public long expectedTerm() {
        return expectedTerm;
    }
}
