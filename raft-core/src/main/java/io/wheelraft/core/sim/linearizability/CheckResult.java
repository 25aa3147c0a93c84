package io.wheelraft.core.sim.linearizability;

import java.util.List;

/**
 * The verdict of a {@link LinearizabilityChecker} run. Immutable.
 *
 * @param outcome       the verdict
 * @param explanation   for {@link Outcome#NOT_LINEARIZABLE}, where the search got furthest and the
 *                      operations it could not place (with their times); for {@link Outcome#UNKNOWN},
 *                      which budget ran out; a one-line summary otherwise
 * @param steps         search steps taken (a measure of how hard the history was)
 * @param linearization for {@link Outcome#LINEARIZABLE}, one valid order of the operations that
 *                      took effect (unknown-outcome operations that never needed to happen are left
 *                      out); empty otherwise
 * @param <I>           the input type of the model
 * @param <O>           the output type of the model
 */
public record CheckResult<I, O>(Outcome outcome, String explanation, long steps, List<Operation<I, O>> linearization) {

    /** The three possible verdicts. */
    public enum Outcome {
        /** Some order of the operations, consistent with real time, is a legal sequential run. */
        LINEARIZABLE,
        /** No such order exists: the service broke linearizability. */
        NOT_LINEARIZABLE,
        /** The search ran out of its time or step budget before reaching a verdict. */
        UNKNOWN
    }

    public CheckResult {
        linearization = List.copyOf(linearization);
    }

    public boolean isLinearizable() {
        return outcome == Outcome.LINEARIZABLE;
    }

    @Override
    public String toString() {
        return outcome + " after " + steps + " steps: " + explanation;
    }
}
