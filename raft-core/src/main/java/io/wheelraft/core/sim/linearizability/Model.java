package io.wheelraft.core.sim.linearizability;

/**
 * The sequential specification a history is checked against: what a single copy of the service
 * would answer to each input, one at a time. Implementations must be pure functions of their
 * arguments (the checker calls them many times, in any order, while it backtracks) and so are
 * safe to share between threads.
 *
 * <p>States must be non-null, immutable, and implement {@code equals}/{@code hashCode}: the
 * checker memoizes (set of operations linearized, state) pairs to avoid searching a subproblem
 * twice.
 *
 * @param <S> the state of the service
 * @param <I> an operation's input (the request)
 * @param <O> an operation's output (the response)
 */
public interface Model<S, I, O> {

    /** The state before any operation. */
    S init();

    /**
     * Applies {@code input} to {@code state} if the service could have answered {@code output}.
     *
     * @return the state afterwards, or null if {@code output} is not a possible answer from {@code state}
     */
    S step(S state, I input, O output);

    /**
     * Applies {@code input} to {@code state} when the answer was never seen (the client timed out),
     * so any answer is acceptable.
     *
     * @return the state afterwards, or null if the input cannot be applied at all from {@code state}
     */
    S stepWithUnknownOutput(S state, I input);

    /**
     * True if {@code input} never changes the state (a read). The checker drops read operations
     * whose outcome is unknown, since they can neither be contradicted nor affect anything,
     * which keeps them out of the search. The default, false, is always correct.
     */
    default boolean isReadOnly(I input) {
        return false;
    }

    /** How to print a state in explanations. */
    default String describeState(S state) {
        return String.valueOf(state);
    }
}
