package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;

import java.util.concurrent.atomic.AtomicBoolean;

/** Wraps a user closure so it runs at most once, whoever completes it (the state machine or the node). */
final class OnceClosure implements Closure {

    private final Closure delegate;
    private final AtomicBoolean done = new AtomicBoolean();

    OnceClosure(Closure delegate) {
        this.delegate = delegate;
    }

    @Override
    public void run(Status status) {
        if (done.compareAndSet(false, true)) {
            delegate.run(status);
        }
    }

    boolean isDone() {
        return done.get();
    }
}
