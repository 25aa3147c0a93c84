package io.wheelraft.core.sim.linearizability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Decides whether a history of client operations is linearizable with respect to a {@link Model}:
 * whether each operation can be given one instant between its invocation and its completion
 * such that, taken in that order, the operations form a legal sequential run of the model.
 * Operations whose outcome is unknown may take effect at any instant after their invocation,
 * with any output, or not at all.
 *
 * <p>The search is the one of Wing &amp; Gong as improved by Lowe and used by Porcupine: walk the
 * invocation and completion events in time order, tentatively linearize an invoked operation
 * whose effect the model accepts, backtrack when an operation completes before it could be
 * placed, and memoize (linearized set, state) pairs so no subproblem is searched twice.
 *
 * <p>Pruning that keeps the search complete: a read whose answer fits the current state is
 * placed at once with no alternative tried ({@link Model#isReadOnly}); unknown-outcome reads are
 * dropped; unknown-outcome operations with equal inputs are interchangeable, so only the earliest
 * unplaced one is tried; and unknown-outcome operations are tried only after every known one, so
 * they are placed only where some answer needs them. Before the complete search, cheap passes
 * allow at most 1, 2, then 4 unknown-outcome operations in a row; they find the usual
 * linearizations quickly, and a linearization they find is valid.
 *
 * <p>Cost: histories of a few thousand operations from 20 clients with a few percent of timed-out
 * operations are usually accepted in tens of milliseconds. Proving a violation is harder when
 * many unknown-outcome operations are still pending at the violation, since every subset of them
 * must be ruled out; such checks may end {@link CheckResult.Outcome#UNKNOWN}, which a test should
 * treat as a failure to investigate, not as a pass.
 *
 * <p>The worst case is exponential, so every check has a budget (wall time and steps); when it
 * runs out the verdict is {@link CheckResult.Outcome#UNKNOWN}, never a hang. A step budget alone
 * gives reproducible verdicts. Stateless and thread-safe: checks may run in parallel.
 */
public final class LinearizabilityChecker {

    private LinearizabilityChecker() {
    }

    /** Checks the operations recorded in {@code history} within {@code timeLimit}. */
    public static <S, I, O> CheckResult<I, O> check(Model<S, I, O> model, History<I, O> history, Duration timeLimit) {
        Objects.requireNonNull(history, "history");
        return check(model, history.operations(), timeLimit, Long.MAX_VALUE);
    }

    /** Checks {@code operations} within {@code timeLimit}. */
    public static <S, I, O> CheckResult<I, O> check(Model<S, I, O> model, List<Operation<I, O>> operations,
                                                    Duration timeLimit) {
        return check(model, operations, timeLimit, Long.MAX_VALUE);
    }

    /**
     * Checks {@code operations}, giving up with {@link CheckResult.Outcome#UNKNOWN} after
     * {@code timeLimit} or {@code maxSteps} search steps, whichever comes first.
     *
     * @throws IllegalArgumentException if the time limit or step budget is not positive
     */
    public static <S, I, O> CheckResult<I, O> check(Model<S, I, O> model, List<Operation<I, O>> operations,
                                                    Duration timeLimit, long maxSteps) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(operations, "operations");
        Objects.requireNonNull(timeLimit, "timeLimit");
        if (timeLimit.isNegative() || timeLimit.isZero()) {
            throw new IllegalArgumentException("time limit must be positive, got " + timeLimit);
        }
        if (maxSteps < 1) {
            throw new IllegalArgumentException("step budget must be positive, got " + maxSteps);
        }
        List<Operation<I, O>> relevant = new ArrayList<>(operations.size());
        for (Operation<I, O> op : operations) {
            Objects.requireNonNull(op, "operation");
            // A read that was never answered constrains nothing and changes nothing.
            if (op.outcomeKnown() || !model.isReadOnly(op.input())) {
                relevant.add(op);
            }
        }
        long deadline = System.nanoTime() + saturatedNanos(timeLimit);
        return new LinearizabilitySearch<>(model, relevant, deadline, maxSteps, timeLimit).run();
    }

    private static long saturatedNanos(Duration d) {
        try {
            return Math.min(d.toNanos(), Long.MAX_VALUE / 4);
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }
}
