package io.wheelraft.core.sim.linearizability;

import io.wheelraft.core.sim.linearizability.CheckResult.Outcome;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.wheelraft.core.sim.linearizability.CounterModel.get;
import static io.wheelraft.core.sim.linearizability.CounterModel.incr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LinearizabilityCheckerTest {

    private static final Duration LIMIT = Duration.ofSeconds(30);
    private static final RegisterModel<Integer> REGISTER = new RegisterModel<>(0);

    private static Operation<CounterModel.Input, Long> op(int client, CounterModel.Input in, long out, long from, long to) {
        return Operation.completed(client, in, out, from, to);
    }

    private static Operation<CounterModel.Input, Long> unknown(int client, CounterModel.Input in, long from) {
        return Operation.unknown(client, in, from);
    }

    private static Operation<RegisterModel.Input<Integer>, Integer> write(int client, int v, long from, long to) {
        return Operation.completed(client, RegisterModel.write(v), null, from, to);
    }

    private static Operation<RegisterModel.Input<Integer>, Integer> read(int client, int v, long from, long to) {
        return Operation.completed(client, RegisterModel.read(), v, from, to);
    }

    @SafeVarargs
    private static CheckResult<CounterModel.Input, Long> counter(Operation<CounterModel.Input, Long>... ops) {
        return LinearizabilityChecker.check(CounterModel.INSTANCE, List.of(ops), LIMIT);
    }

    @SafeVarargs
    private static CheckResult<RegisterModel.Input<Integer>, Integer> register(
            Operation<RegisterModel.Input<Integer>, Integer>... ops) {
        return LinearizabilityChecker.check(REGISTER, List.of(ops), LIMIT);
    }

    @Test
    void emptyHistoryIsLinearizable() {
        assertTrue(counter().isLinearizable());
    }

    @Test
    void sequentialCounterRunIsLinearizable() {
        CheckResult<CounterModel.Input, Long> r = counter(
                op(1, incr(2), 2, 0, 1), op(2, get(), 2, 2, 3), op(1, incr(3), 5, 4, 5), op(2, get(), 5, 6, 7));
        assertEquals(Outcome.LINEARIZABLE, r.outcome(), r.explanation());
        assertEquals(4, r.linearization().size());
    }

    @Test
    void overlappingIncrementsMayTakeEffectInEitherOrder() {
        assertTrue(counter(op(1, incr(1), 1, 0, 10), op(2, incr(1), 2, 1, 9)).isLinearizable());
        assertTrue(counter(op(1, incr(1), 2, 0, 10), op(2, incr(1), 1, 1, 9)).isLinearizable());
    }

    @Test
    void overlappingReadMaySeeTheValueBeforeOrAfterAWrite() {
        assertTrue(register(write(1, 7, 0, 10), read(2, 0, 1, 2)).isLinearizable());
        assertTrue(register(write(1, 7, 0, 10), read(2, 7, 1, 2)).isLinearizable());
    }

    @Test
    void lostIncrementIsNotLinearizable() {
        CheckResult<CounterModel.Input, Long> r = counter(op(1, incr(1), 1, 0, 1), op(2, incr(1), 1, 2, 3));
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome());
    }

    @Test
    void staleReadAfterACompletedIncrementIsNotLinearizable() {
        CheckResult<CounterModel.Input, Long> r = counter(op(1, incr(1), 1, 0, 10), op(2, get(), 0, 20, 30));
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome());
        assertTrue(r.explanation().contains("client 2: get -> 0 [invoked 20, completed 30]"), r.explanation());
        assertTrue(r.explanation().contains("impossible from state 1"), r.explanation());
    }

    @Test
    void staleReadAfterACompletedWriteIsNotLinearizable() {
        CheckResult<RegisterModel.Input<Integer>, Integer> r = register(
                write(1, 1, 0, 10), write(1, 2, 11, 20), read(2, 1, 21, 30));
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome());
        assertTrue(r.explanation().contains("client 2: read -> 1 [invoked 21, completed 30]"), r.explanation());
    }

    @Test
    void readsObservingValuesInTheWrongOrderAreNotLinearizable() {
        // The write overlaps both reads, but once a read has seen the new value a later one cannot see the old.
        assertEquals(Outcome.NOT_LINEARIZABLE,
                register(write(1, 1, 0, 100), read(2, 1, 10, 20), read(3, 0, 30, 40)).outcome());
        assertTrue(register(write(1, 1, 0, 100), read(2, 0, 10, 20), read(3, 1, 30, 40)).isLinearizable());
        assertEquals(Outcome.NOT_LINEARIZABLE,
                counter(op(1, incr(1), 1, 0, 100), op(2, get(), 1, 10, 20), op(3, get(), 0, 30, 40)).outcome());
    }

    @Test
    void unknownIncrementThatHappenedIsAccepted() {
        assertTrue(counter(unknown(1, incr(5), 0), op(2, get(), 5, 10, 11), op(2, incr(1), 6, 12, 13)).isLinearizable());
    }

    @Test
    void unknownIncrementThatNeverHappenedIsAccepted() {
        assertTrue(counter(unknown(1, incr(5), 0), op(2, get(), 0, 10, 11), op(2, incr(1), 1, 12, 13)).isLinearizable());
    }

    @Test
    void unknownIncrementMayTakeEffectLongAfterItsInvocation() {
        assertTrue(counter(unknown(1, incr(5), 0), op(2, get(), 0, 10, 11), op(2, get(), 5, 1000, 1001)).isLinearizable());
    }

    @Test
    void unknownIncrementTakesEffectAtMostOnce() {
        assertEquals(Outcome.NOT_LINEARIZABLE,
                counter(unknown(1, incr(5), 0), op(2, get(), 5, 10, 11), op(2, get(), 10, 12, 13)).outcome());
    }

    @Test
    void unknownOperationWhoseEffectAppearsBeforeItsInvocationIsRejected() {
        CheckResult<CounterModel.Input, Long> r = counter(op(2, get(), 5, 0, 1), unknown(1, incr(5), 2));
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome());
        CheckResult<RegisterModel.Input<Integer>, Integer> w = register(read(2, 9, 0, 1),
                Operation.unknown(1, RegisterModel.write(9), 2));
        assertEquals(Outcome.NOT_LINEARIZABLE, w.outcome());
    }

    @Test
    void unknownReadsAreIgnored() {
        assertTrue(counter(op(1, incr(1), 1, 0, 1), unknown(2, get(), 0), unknown(3, get(), 5)).isLinearizable());
    }

    @Test
    void operationsTouchingAtTheSameInstantAreTreatedAsOverlappingWhenBuiltByHand() {
        assertTrue(counter(op(1, incr(1), 1, 0, 5), op(2, get(), 0, 5, 6)).isLinearizable());
        assertEquals(Outcome.NOT_LINEARIZABLE, counter(op(1, incr(1), 1, 0, 5), op(2, get(), 0, 6, 7)).outcome());
    }

    @Test
    void explanationListsTheOperationsThatCouldNotBePlacedWithTheirTimes() {
        CheckResult<CounterModel.Input, Long> r = counter(
                op(1, incr(1), 1, 0, 10),
                op(2, incr(1), 2, 20, 30),
                op(3, incr(1), 4, 35, 60),
                op(1, get(), 2, 40, 50));
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome());
        String text = r.explanation();
        assertTrue(text.contains("client 3: incr(1) -> 4 [invoked 35, completed 60]"), text);
        assertTrue(text.contains("client 1: get -> 2 [invoked 40, completed 50]"), text);
        assertTrue(text.contains("client 2: incr(1) -> 2 [invoked 20, completed 30]"), text);
        assertFalse(r.isLinearizable());
    }

    @Test
    void linearizationIsAValidSequentialRun() {
        CheckResult<CounterModel.Input, Long> r = counter(
                op(1, incr(1), 3, 0, 100), op(2, incr(1), 1, 0, 100), op(3, incr(1), 2, 0, 100),
                unknown(4, incr(10), 0), op(5, get(), 13, 50, 200));
        assertTrue(r.isLinearizable(), r.explanation());
        long value = 0;
        for (Operation<CounterModel.Input, Long> o : r.linearization()) {
            Long next = o.outcomeKnown() ? CounterModel.INSTANCE.step(value, o.input(), o.output())
                    : CounterModel.INSTANCE.stepWithUnknownOutput(value, o.input());
            assertTrue(next != null, "linearization step " + o + " from " + value);
            value = next;
        }
        assertEquals(13, value);
    }

    @Test
    void exhaustedStepBudgetGivesUnknownInsteadOfHanging() {
        List<Operation<CounterModel.Input, Long>> ops = hopelessHistory();
        CheckResult<CounterModel.Input, Long> r = LinearizabilityChecker.check(CounterModel.INSTANCE, ops, LIMIT, 100_000);
        assertEquals(Outcome.UNKNOWN, r.outcome(), r.explanation());
        assertTrue(r.explanation().contains("step budget of 100000"), r.explanation());
    }

    @Test
    void exceededTimeLimitGivesUnknownInsteadOfHanging() {
        CheckResult<CounterModel.Input, Long> r =
                LinearizabilityChecker.check(CounterModel.INSTANCE, hopelessHistory(), Duration.ofMillis(200));
        assertEquals(Outcome.UNKNOWN, r.outcome(), r.explanation());
        assertTrue(r.explanation().contains("time limit"), r.explanation());
    }

    /** Sixty concurrent unknown increments of distinct powers of two, then a read no subset explains. */
    private static List<Operation<CounterModel.Input, Long>> hopelessHistory() {
        List<Operation<CounterModel.Input, Long>> ops = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ops.add(unknown(i, incr(1L << i), 0));
        }
        ops.add(op(99, get(), -1, 10, 20));
        return ops;
    }

    @Test
    void badBudgetsAreRejected() {
        assertThrows(IllegalArgumentException.class,
                () -> LinearizabilityChecker.check(CounterModel.INSTANCE, List.of(), Duration.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> LinearizabilityChecker.check(CounterModel.INSTANCE, List.of(), LIMIT, 0));
    }

    @Test
    void malformedOperationsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> op(1, incr(1), 1, 10, 5));
        assertThrows(IllegalArgumentException.class, () -> op(1, incr(1), 1, 0, Operation.NEVER));
        assertThrows(IllegalArgumentException.class, () -> Operation.completed(1, null, 1L, 0, 1));
    }
}
