package io.wheelraft.core.sim.linearizability;

import io.wheelraft.core.sim.linearizability.CheckResult.Outcome;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks large generated histories. Budgets are in steps, not time, so verdicts are the same on
 * any machine; the generous step budget is what "checked quickly" means here.
 */
class RandomHistoryCheckTest {

    private static final Logger LOG = LoggerFactory.getLogger(RandomHistoryCheckTest.class);
    private static final Duration NO_TIME_LIMIT = Duration.ofMinutes(5);
    /** About a second of search on a slow machine; the histories below need far less. */
    private static final long STEP_BUDGET = 5_000_000;
    /**
     * Violations are proved fast when few operations have an unknown outcome; with many pending
     * ones the complete search may run out of budget instead (UNKNOWN, see the checker's Javadoc).
     */
    private static final double DETECTION_TIMEOUT_RATE = 0.003;

    @Test
    void largeLinearizableHistoriesAreAcceptedWithinAFewStepsPerOperation() {
        for (long seed = 1; seed <= 5; seed++) {
            List<Operation<CounterModel.Input, Long>> ops = RandomCounterHistory.generate(seed, 20, 3000, 0.02);
            long start = System.nanoTime();
            CheckResult<CounterModel.Input, Long> r =
                    LinearizabilityChecker.check(CounterModel.INSTANCE, ops, NO_TIME_LIMIT, STEP_BUDGET);
            LOG.info("seed {}: {} ops, {} after {} steps in {} ms", seed, ops.size(), r.outcome(), r.steps(),
                    (System.nanoTime() - start) / 1_000_000);
            assertEquals(Outcome.LINEARIZABLE, r.outcome(), "seed " + seed + ": " + r.explanation());
        }
    }

    @Test
    void manySmallHistoriesAsInASimulationSweepAreAccepted() {
        long start = System.nanoTime();
        long steps = 0;
        for (long seed = 100; seed < 300; seed++) {
            List<Operation<CounterModel.Input, Long>> ops = RandomCounterHistory.generate(seed, 10, 500, 0.05);
            CheckResult<CounterModel.Input, Long> r =
                    LinearizabilityChecker.check(CounterModel.INSTANCE, ops, NO_TIME_LIMIT, STEP_BUDGET);
            assertEquals(Outcome.LINEARIZABLE, r.outcome(), "seed " + seed + ": " + r.explanation());
            steps += r.steps();
        }
        LOG.info("200 histories of 500 ops: {} steps in {} ms", steps, (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void swappedReadsInALargeHistoryAreDetected() {
        for (long seed = 1; seed <= 5; seed++) {
            List<Operation<CounterModel.Input, Long>> ops = RandomCounterHistory.generate(seed, 20, 3000, DETECTION_TIMEOUT_RATE);
            List<Operation<CounterModel.Input, Long>> broken = swapTwoSequentialReads(ops);
            CheckResult<CounterModel.Input, Long> r =
                    LinearizabilityChecker.check(CounterModel.INSTANCE, broken, NO_TIME_LIMIT, STEP_BUDGET);
            LOG.info("seed {}: swapped reads found {} after {} steps", seed, r.outcome(), r.steps());
            assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome(), "seed " + seed + ": " + r.explanation());
        }
    }

    @Test
    void lostIncrementInALargeHistoryIsDetected() {
        List<Operation<CounterModel.Input, Long>> ops = RandomCounterHistory.generate(7, 20, 3000, DETECTION_TIMEOUT_RATE);
        // Acknowledge one increment in the middle but give every later answer as if it never happened.
        List<Operation<CounterModel.Input, Long>> broken = new ArrayList<>(ops);
        int victim = -1;
        for (int i = ops.size() / 2; i < ops.size(); i++) {
            if (ops.get(i).outcomeKnown() && ops.get(i).input() instanceof CounterModel.Incr) {
                victim = i;
                break;
            }
        }
        Operation<CounterModel.Input, Long> lost = ops.get(victim);
        long delta = ((CounterModel.Incr) lost.input()).delta();
        for (int i = 0; i < ops.size(); i++) {
            Operation<CounterModel.Input, Long> o = ops.get(i);
            if (o.outcomeKnown() && o.invokeTime() > lost.completeTime()) {
                broken.set(i, Operation.recorded(o.clientId(), o.input(), o.output() - delta, true,
                        o.invokeTime(), o.completeTime(), o.invokeOrder(), o.completeOrder()));
            }
        }
        CheckResult<CounterModel.Input, Long> r =
                LinearizabilityChecker.check(CounterModel.INSTANCE, broken, NO_TIME_LIMIT, STEP_BUDGET);
        LOG.info("lost increment found {} after {} steps", r.outcome(), r.steps());
        assertEquals(Outcome.NOT_LINEARIZABLE, r.outcome(), r.explanation());
    }

    /** Swaps the answers of two non-overlapping reads that saw different values, so the later one goes back in time. */
    private static List<Operation<CounterModel.Input, Long>> swapTwoSequentialReads(List<Operation<CounterModel.Input, Long>> ops) {
        List<Operation<CounterModel.Input, Long>> out = new ArrayList<>(ops);
        for (int i = ops.size() / 3; i < ops.size(); i++) {
            Operation<CounterModel.Input, Long> a = ops.get(i);
            if (!a.outcomeKnown() || !(a.input() instanceof CounterModel.Get)) {
                continue;
            }
            for (int j = i + 1; j < ops.size(); j++) {
                Operation<CounterModel.Input, Long> b = ops.get(j);
                if (b.outcomeKnown() && b.input() instanceof CounterModel.Get && b.invokeTime() > a.completeTime()
                        && b.output() > a.output()) {
                    out.set(i, withOutput(a, b.output()));
                    out.set(j, withOutput(b, a.output()));
                    return out;
                }
            }
        }
        throw new AssertionError("no pair of sequential reads to swap");
    }

    private static Operation<CounterModel.Input, Long> withOutput(Operation<CounterModel.Input, Long> o, long output) {
        return Operation.recorded(o.clientId(), o.input(), output, true, o.invokeTime(), o.completeTime(),
                o.invokeOrder(), o.completeOrder());
    }

    @Test
    void generatedHistoriesContainConcurrencyAndUnknownOutcomes() {
        List<Operation<CounterModel.Input, Long>> ops = RandomCounterHistory.generate(3, 20, 3000, 0.05);
        long unknown = ops.stream().filter(o -> !o.outcomeKnown()).count();
        long overlapping = 0;
        for (int i = 1; i < ops.size(); i++) {
            if (ops.get(i).invokeTime() < ops.get(i - 1).completeTime()) {
                overlapping++;
            }
        }
        assertTrue(unknown > 50, "unknown outcomes: " + unknown);
        assertTrue(overlapping > 1000, "overlapping neighbours: " + overlapping);
    }
}
