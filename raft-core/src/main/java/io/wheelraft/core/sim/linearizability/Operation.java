package io.wheelraft.core.sim.linearizability;

/**
 * One client operation of a history: who issued it, what it asked, what it was told, and when it
 * was invoked and completed. An operation whose outcome is unknown (the client timed out) has no
 * output and no completion: it may have taken effect at any moment after its invocation, or
 * never. Immutable.
 *
 * <p>Times are in any unit of one clock (the simulation's virtual milliseconds, or
 * {@code System.nanoTime()}). When an invocation and a completion carry the same time, operations
 * recorded by a {@link History} are ordered by when they were recorded; operations built by hand
 * are then treated as overlapping (the permissive choice).
 *
 * @param <I> the input type of the model
 * @param <O> the output type of the model
 */
public final class Operation<I, O> {

    /** The completion time of an operation whose outcome is unknown. */
    public static final long NEVER = Long.MAX_VALUE;

    private final int clientId;
    private final I input;
    private final O output;
    private final boolean outcomeKnown;
    private final long invokeTime;
    private final long completeTime;
    // Tie-breakers among events of equal time: the order History recorded them in (0 when built by hand).
    private final long invokeOrder;
    private final long completeOrder;

    private Operation(int clientId, I input, O output, boolean outcomeKnown, long invokeTime, long completeTime,
                      long invokeOrder, long completeOrder) {
        if (input == null) {
            throw new IllegalArgumentException("operation of client " + clientId + " has no input");
        }
        if (outcomeKnown && completeTime == NEVER) {
            throw new IllegalArgumentException("operation " + input + " of client " + clientId
                    + " has a known outcome, so it needs a completion time before Long.MAX_VALUE");
        }
        if (completeTime < invokeTime) {
            throw new IllegalArgumentException("operation " + input + " of client " + clientId + " completes at "
                    + completeTime + ", before its invocation at " + invokeTime);
        }
        this.clientId = clientId;
        this.input = input;
        this.output = output;
        this.outcomeKnown = outcomeKnown;
        this.invokeTime = invokeTime;
        this.completeTime = completeTime;
        this.invokeOrder = invokeOrder;
        this.completeOrder = completeOrder;
    }

    /** An operation that completed at {@code completeTime} with {@code output}. */
    public static <I, O> Operation<I, O> completed(int clientId, I input, O output, long invokeTime, long completeTime) {
        return new Operation<>(clientId, input, output, true, invokeTime, completeTime, 0, 0);
    }

    /** An operation invoked at {@code invokeTime} whose outcome is unknown (it may or may not have happened). */
    public static <I, O> Operation<I, O> unknown(int clientId, I input, long invokeTime) {
        return new Operation<>(clientId, input, null, false, invokeTime, NEVER, 0, 0);
    }

    static <I, O> Operation<I, O> recorded(int clientId, I input, O output, boolean outcomeKnown, long invokeTime,
                                           long completeTime, long invokeOrder, long completeOrder) {
        return new Operation<>(clientId, input, output, outcomeKnown, invokeTime, completeTime, invokeOrder, completeOrder);
    }

    public int clientId() {
        return clientId;
    }

    public I input() {
        return input;
    }

    /** The output; null when the outcome is unknown (see {@link #outcomeKnown()}). */
    public O output() {
        return output;
    }

    /** False for an operation that timed out: it may or may not have happened, its output was never seen. */
    public boolean outcomeKnown() {
        return outcomeKnown;
    }

    public long invokeTime() {
        return invokeTime;
    }

    /** When the answer arrived; {@link #NEVER} when the outcome is unknown. */
    public long completeTime() {
        return completeTime;
    }

    long invokeOrder() {
        return invokeOrder;
    }

    long completeOrder() {
        return completeOrder;
    }

    /** For example {@code client 3: incr(1) -> 13 [invoked 100, completed 130]}. */
    @Override
    public String toString() {
        if (!outcomeKnown) {
            return "client " + clientId + ": " + input + " -> ? [invoked " + invokeTime + ", outcome unknown]";
        }
        return "client " + clientId + ": " + input + " -> " + output + " [invoked " + invokeTime
                + ", completed " + completeTime + "]";
    }
}
