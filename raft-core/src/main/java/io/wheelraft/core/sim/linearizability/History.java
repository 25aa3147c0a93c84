package io.wheelraft.core.sim.linearizability;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Records the operations of concurrent clients for a linearizability check. A client calls
 * {@link #invoke} just before sending a request and {@link #complete}, {@link #timeout} or
 * {@link #fail} once it knows the outcome; times come from the supplied clock (the simulation's
 * virtual clock, or a real one).
 *
 * <p>Thread-safe: any number of client threads may record concurrently. Each event is stamped
 * with its time and its recording order under one lock, so an operation recorded as completed
 * before another was invoked is ordered before it even when both carry the same clock reading.
 *
 * @param <I> the input type of the model
 * @param <O> the output type of the model
 */
public final class History<I, O> {

    /** A handle on an invoked operation, passed back to record its outcome. */
    public static final class Invocation {
        private final History<?, ?> owner;
        private final int index;

        private Invocation(History<?, ?> owner, int index) {
            this.owner = owner;
            this.index = index;
        }

        @Override
        public String toString() {
            return "invocation #" + index;
        }
    }

    private enum Outcome { PENDING, COMPLETED, TIMED_OUT, FAILED }

    private static final class Entry<I, O> {
        final int clientId;
        final I input;
        final long invokeTime;
        final long invokeOrder;
        Outcome outcome = Outcome.PENDING;
        O output;
        long completeTime;
        long completeOrder;

        Entry(int clientId, I input, long invokeTime, long invokeOrder) {
            this.clientId = clientId;
            this.input = input;
            this.invokeTime = invokeTime;
            this.invokeOrder = invokeOrder;
        }
    }

    private final LongSupplier clock;
    private final List<Entry<I, O>> entries = new ArrayList<>();
    private long lastTime = Long.MIN_VALUE;
    private long order;

    /** A history whose times are read from {@code clock}, which must never go backwards. */
    public History(LongSupplier clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Records that {@code clientId} sends {@code input} now. */
    public synchronized Invocation invoke(int clientId, I input) {
        Objects.requireNonNull(input, "input");
        Entry<I, O> e = new Entry<>(clientId, input, now(), ++order);
        entries.add(e);
        return new Invocation(this, entries.size() - 1);
    }

    /** Records that the operation completed now with {@code output}. */
    public synchronized void complete(Invocation invocation, O output) {
        Entry<I, O> e = pending(invocation);
        e.output = output;
        finish(e, Outcome.COMPLETED);
    }

    /** Records that the outcome will never be known: the operation may or may not have happened. */
    public synchronized void timeout(Invocation invocation) {
        finish(pending(invocation), Outcome.TIMED_OUT);
    }

    /** Records that the operation certainly did not happen (it is left out of the check). */
    public synchronized void fail(Invocation invocation) {
        finish(pending(invocation), Outcome.FAILED);
    }

    /** Number of operations invoked so far. */
    public synchronized int size() {
        return entries.size();
    }

    /**
     * The operations recorded so far, in invocation order: completed ones, and as unknown the ones
     * that timed out or are still pending. Failed operations are left out.
     */
    public synchronized List<Operation<I, O>> operations() {
        List<Operation<I, O>> out = new ArrayList<>(entries.size());
        for (Entry<I, O> e : entries) {
            switch (e.outcome) {
                case COMPLETED -> out.add(Operation.recorded(e.clientId, e.input, e.output, true,
                        e.invokeTime, e.completeTime, e.invokeOrder, e.completeOrder));
                case PENDING, TIMED_OUT -> out.add(Operation.recorded(e.clientId, e.input, null, false,
                        e.invokeTime, Operation.NEVER, e.invokeOrder, Long.MAX_VALUE));
                case FAILED -> {
                    // Certainly not applied: nothing to check.
                }
            }
        }
        return out;
    }

    private Entry<I, O> pending(Invocation invocation) {
        Objects.requireNonNull(invocation, "invocation");
        if (invocation.owner != this) {
            throw new IllegalArgumentException(invocation + " does not belong to this history");
        }
        Entry<I, O> e = entries.get(invocation.index);
        if (e.outcome != Outcome.PENDING) {
            throw new IllegalStateException(invocation + " (" + e.input + " of client " + e.clientId
                    + ") already has an outcome: " + e.outcome);
        }
        return e;
    }

    private void finish(Entry<I, O> e, Outcome outcome) {
        e.completeTime = now();
        e.completeOrder = ++order;
        e.outcome = outcome;
    }

    private long now() {
        long t = clock.getAsLong();
        if (t < lastTime) {
            throw new IllegalStateException("history clock went backwards from " + lastTime + " to " + t);
        }
        if (t == Operation.NEVER) {
            throw new IllegalStateException("history clock reads Long.MAX_VALUE, which means 'never' in a history");
        }
        lastTime = t;
        return t;
    }
}
