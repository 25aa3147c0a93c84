package io.wheelraft.example;

import io.wheelraft.core.sim.linearizability.CheckResult;
import io.wheelraft.core.sim.linearizability.CounterModel;
import io.wheelraft.core.sim.linearizability.LinearizabilityChecker;
import io.wheelraft.core.sim.linearizability.Model;
import io.wheelraft.core.sim.linearizability.Operation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks a chaos run's client history with the project's linearizability checker against the
 * counter model (incr returns the new value, get the value). The whole history is checked in one
 * search with a time budget: for this model the search places nearly every operation at its first
 * try, so it costs about a second per few hundred thousand operations. When the history is not
 * linearizable, it narrows the failure down to the smallest failing window for the report: the
 * shortest prefix that already fails (operations still running at its end count as unknown, so a
 * prefix of a good history is always good), then the latest start within it from which the
 * operations still fail with the counter's starting value left free.
 *
 * <p>Stateless and thread-safe.
 */
final class HistoryCheck {

    /** The verdict for the report. Times are seconds since the run started. */
    record Verdict(String outcome, int operations, int unknownOutcomes, long steps, double millis, String explanation,
                   Window window) {
        boolean linearizable() {
            return outcome.equals(CheckResult.Outcome.LINEARIZABLE.name());
        }
    }

    /**
     * The smallest failing window: the operations invoked from {@code fromSeconds} until {@code toSeconds}
     * (those still running then count as unknown).
     */
    record Window(double fromSeconds, double toSeconds, int operations, String explanation) {
    }

    /**
     * Step budget of one search. Every step may leave a memo entry (a few dozen bytes), so a
     * search that cannot decide (many increments of unknown outcome) would otherwise fill the heap
     * before its time budget ends: one run's 108 million steps exhausted a 6 GiB heap. A quarter of
     * the heap at about 64 bytes a step; running out gives UNKNOWN, as the time budget does.
     */
    static final long MAX_STEPS = Math.max(1_000_000L, Runtime.getRuntime().maxMemory() / 4 / 64);

    private HistoryCheck() {
    }

    static Verdict check(List<Operation<CounterModel.Input, Long>> ops, Duration budget) {
        long t0 = System.nanoTime();
        CheckResult<CounterModel.Input, Long> r = LinearizabilityChecker.check(CounterModel.INSTANCE, ops, budget, MAX_STEPS);
        int unknown = (int) ops.stream().filter(o -> !o.outcomeKnown()).count();
        Window window = null;
        if (r.outcome() == CheckResult.Outcome.NOT_LINEARIZABLE) {
            // The narrowing gets one more budget in all, not one per check (it runs dozens of checks).
            window = smallestFailingWindow(ops, System.nanoTime() + budget.toNanos());
        }
        return new Verdict(r.outcome().name(), ops.size(), unknown, r.steps(), (System.nanoTime() - t0) / 1e6,
                shorten(r.explanation()), window);
    }

    private static Window smallestFailingWindow(List<Operation<CounterModel.Input, Long>> ops, long deadline) {
        // Candidate ends: every moment an operation was invoked or returned.
        List<Long> ends = ops.stream().flatMap(o -> o.outcomeKnown() ? java.util.stream.Stream.of(o.invokeTime(), o.completeTime())
                : java.util.stream.Stream.of(o.invokeTime())).distinct().sorted().toList();
        // Shortest failing prefix: binary search on its end.
        int lo = 0;
        int hi = ends.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (fails(CounterModel.INSTANCE, prefix(ops, ends.get(mid), Long.MIN_VALUE), deadline)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        long end = ends.get(lo);
        // Latest start from which the prefix's operations still fail with a free starting value.
        int a = 0;
        int b = lo;
        while (a < b) {
            int mid = (a + b + 1) >>> 1;
            if (fails(FreeStartCounter.INSTANCE, prefix(ops, end, ends.get(mid)), deadline)) {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        long start = a == 0 ? Long.MIN_VALUE : ends.get(a);
        List<Operation<CounterModel.Input, Long>> window = prefix(ops, end, start);
        Model<Long, CounterModel.Input, Long> model = a == 0 ? CounterModel.INSTANCE : FreeStartCounter.INSTANCE;
        CheckResult<CounterModel.Input, Long> r = LinearizabilityChecker.check(model, window, left(deadline), MAX_STEPS);
        String spent = System.nanoTime() - deadline > 0
                ? " (narrowing stopped when its time budget ran out: the window may be wider than needed)" : "";
        return new Window(a == 0 ? 0 : start / 1e9, end / 1e9, window.size(), shorten(r.explanation()) + spent);
    }

    /** Operations invoked in [from, end]; those that had not returned by {@code end} become unknown. */
    private static List<Operation<CounterModel.Input, Long>> prefix(List<Operation<CounterModel.Input, Long>> ops, long end, long from) {
        List<Operation<CounterModel.Input, Long>> out = new ArrayList<>();
        for (Operation<CounterModel.Input, Long> o : ops) {
            if (o.invokeTime() > end || o.invokeTime() < from) {
                continue;
            }
            out.add(!o.outcomeKnown() || o.completeTime() <= end ? o : Operation.unknown(o.clientId(), o.input(), o.invokeTime()));
        }
        return out;
    }

    /** Whether the operations are proven not linearizable before the deadline (an undecided check counts as not failing). */
    private static boolean fails(Model<Long, CounterModel.Input, Long> model, List<Operation<CounterModel.Input, Long>> ops, long deadline) {
        return LinearizabilityChecker.check(model, ops, left(deadline), MAX_STEPS).outcome() == CheckResult.Outcome.NOT_LINEARIZABLE;
    }

    /** The time left until {@code deadline}, at least a millisecond (the checker needs a positive budget). */
    private static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(1_000_000L, deadline - System.nanoTime()));
    }

    private static String shorten(String s) {
        return s.length() <= 2000 ? s : s.substring(0, 2000) + String.format(Locale.ROOT, " … (%d more characters)", s.length() - 2000);
    }

    /**
     * The counter with its starting value unknown: the first answer fixes it. Used only to narrow a
     * failure down to a window that starts mid-run.
     */
    static final class FreeStartCounter implements Model<Long, CounterModel.Input, Long> {
        static final FreeStartCounter INSTANCE = new FreeStartCounter();
        private static final Long UNSET = Long.MIN_VALUE;

        @Override
        public Long init() {
            return UNSET;
        }

        @Override
        public Long step(Long state, CounterModel.Input input, Long output) {
            if (output == null) {
                return null;
            }
            if (state.equals(UNSET)) {
                return output;
            }
            return CounterModel.INSTANCE.step(state, input, output);
        }

        @Override
        public Long stepWithUnknownOutput(Long state, CounterModel.Input input) {
            return state.equals(UNSET) ? UNSET : CounterModel.INSTANCE.stepWithUnknownOutput(state, input);
        }

        @Override
        public boolean isReadOnly(CounterModel.Input input) {
            return CounterModel.INSTANCE.isReadOnly(input);
        }

        @Override
        public String describeState(Long state) {
            return state.equals(UNSET) ? "unknown" : state.toString();
        }
    }
}
