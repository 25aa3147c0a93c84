package io.wheelraft.core.sim.linearizability;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Generates a history of a correct counter service: clients invoke operations at random ticks of
 * a virtual clock, each operation takes effect atomically at a random tick inside its interval,
 * and some time out (taking effect or not, possibly after the client gave up). The result is
 * linearizable by construction. Deterministic for a seed; single-threaded.
 */
final class RandomCounterHistory {

    private static final class InFlight {
        final History.Invocation invocation;
        final CounterModel.Input input;
        final boolean timesOut;
        final boolean takesEffect;
        boolean applied;
        long output;

        InFlight(History.Invocation invocation, CounterModel.Input input, boolean timesOut, boolean takesEffect) {
            this.invocation = invocation;
            this.input = input;
            this.timesOut = timesOut;
            this.takesEffect = takesEffect;
        }
    }

    private RandomCounterHistory() {
    }

    static List<Operation<CounterModel.Input, Long>> generate(long seed, int clients, int operations, double timeoutRate) {
        SplittableRandom rng = new SplittableRandom(seed);
        long[] now = {0};
        History<CounterModel.Input, Long> history = new History<>(() -> now[0]);
        InFlight[] busy = new InFlight[clients];
        List<InFlight> abandoned = new ArrayList<>();
        long value = 0;
        int invoked = 0;
        while (invoked < operations || anyBusy(busy) || !abandoned.isEmpty()) {
            now[0]++;
            for (int c = 0; c < clients; c++) {
                InFlight f = busy[c];
                double roll = rng.nextDouble();
                if (f == null) {
                    if (invoked < operations && roll < 0.3) {
                        CounterModel.Input in = rng.nextInt(10) < 6 ? CounterModel.incr(1 + rng.nextInt(5)) : CounterModel.get();
                        boolean timesOut = rng.nextDouble() < timeoutRate;
                        busy[c] = new InFlight(history.invoke(c, in), in, timesOut, !timesOut || rng.nextBoolean());
                        invoked++;
                    }
                } else if (!f.applied && roll < 0.4) {
                    if (f.takesEffect) {
                        value = apply(f, value);
                    }
                    f.applied = true;
                } else if (f.timesOut && roll < 0.5) {
                    // The client gives up; the service may still apply the request later.
                    history.timeout(f.invocation);
                    if (!f.applied) {
                        abandoned.add(f);
                    }
                    busy[c] = null;
                } else if (f.applied && !f.timesOut && roll < 0.7) {
                    history.complete(f.invocation, f.output);
                    busy[c] = null;
                }
            }
            if (!abandoned.isEmpty() && rng.nextDouble() < 0.2) {
                InFlight late = abandoned.remove(rng.nextInt(abandoned.size()));
                if (late.takesEffect) {
                    value = apply(late, value);
                }
            }
        }
        return history.operations();
    }

    private static long apply(InFlight f, long value) {
        long next = f.input instanceof CounterModel.Incr incr ? value + incr.delta() : value;
        f.output = next;
        return next;
    }

    private static boolean anyBusy(InFlight[] busy) {
        for (InFlight f : busy) {
            if (f != null) {
                return true;
            }
        }
        return false;
    }
}
