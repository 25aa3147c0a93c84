package io.wheelraft.core.sim.linearizability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One run of the linearizability search over one history (see {@link LinearizabilityChecker} for
 * the algorithm). The events live in a doubly linked list over int arrays; linearizing an
 * operation unlinks its invocation and completion ("lift"), and backtracking relinks them in
 * reverse order, so both are O(1). The linearized set is a {@code long[]} bit set with an
 * incrementally kept Zobrist hash for the memo.
 *
 * <p>Single use and single-threaded.
 */
final class LinearizabilitySearch<S, I, O> {

    private static final int HEAD = 0;
    private static final int TIME_CHECK_INTERVAL_MASK = 1023;
    private static final int RECENT_SHOWN = 8;
    private static final int CANDIDATES_SHOWN = 20;

    private final Model<S, I, O> model;
    private final List<Operation<I, O>> ops;
    private final long deadlineNanos;
    private final long maxSteps;
    private final Duration timeLimit;
    private final long startNanos = System.nanoTime();

    // The event list: nodes 1..2n in time order, HEAD before them, `end` after them.
    private final int end;
    private final int[] next;
    private final int[] prev;
    private final int[] opOf;
    private final int[] returnOf;
    private final boolean[] isCall;

    private final boolean[] known;
    private final long[] zobrist;
    private final long[] bits;
    private long setHash;
    private int knownRemaining;
    private final SeenStates seen = new SeenStates();

    // The stack of linearized operations: the invocation node, the state before it, the phase it was tried in.
    private final int[] stackNode;
    private final Object[] stackState;
    private final boolean[] stackPhase;
    private int depth;

    // The deepest dead end, for the explanation.
    private int bestDepth = -1;
    private Object bestState;
    private int bestBlocked;
    private int[] bestCandidates;
    private int[] bestRecent;

    LinearizabilitySearch(Model<S, I, O> model, List<Operation<I, O>> operations, long deadlineNanos, long maxSteps,
                          Duration timeLimit) {
        this.model = model;
        this.deadlineNanos = deadlineNanos;
        this.maxSteps = maxSteps;
        this.timeLimit = timeLimit;
        // Number operations in invocation order, so the linearized set is mostly a dense prefix (see SeenStates).
        List<Operation<I, O>> sorted = new ArrayList<>(operations);
        sorted.sort(Comparator.<Operation<I, O>>comparingLong(Operation::invokeTime).thenComparingLong(Operation::invokeOrder));
        this.ops = sorted;
        int n = sorted.size();

        known = new boolean[n];
        zobrist = new long[n];
        SplittableRandom random = new SplittableRandom(0x5EED_11AE_A7AB_1EL);
        for (int i = 0; i < n; i++) {
            known[i] = sorted.get(i).outcomeKnown();
            zobrist[i] = random.nextLong();
            if (known[i]) {
                knownRemaining++;
            }
        }
        bits = new long[(n + 63) >>> 6];

        // Events: 2*i is the invocation of op i, 2*i+1 its completion.
        Integer[] events = new Integer[2 * n];
        for (int i = 0; i < events.length; i++) {
            events[i] = i;
        }
        java.util.Arrays.sort(events, Comparator.<Integer>comparingLong(this::eventTime)
                .thenComparingLong(this::eventOrder)
                .thenComparingInt(ev -> ev & 1) // at equal time and order: invocations first (overlap)
                .thenComparingInt(ev -> ev >>> 1));
        end = 2 * n + 1;
        next = new int[end + 1];
        prev = new int[end + 1];
        opOf = new int[end + 1];
        returnOf = new int[end + 1];
        isCall = new boolean[end + 1];
        int[] nodeOfEvent = new int[2 * n];
        for (int pos = 0; pos < events.length; pos++) {
            int node = pos + 1;
            int ev = events[pos];
            nodeOfEvent[ev] = node;
            opOf[node] = ev >>> 1;
            isCall[node] = (ev & 1) == 0;
        }
        for (int i = 0; i < n; i++) {
            returnOf[nodeOfEvent[2 * i]] = nodeOfEvent[2 * i + 1];
        }
        for (int node = 0; node < end; node++) {
            next[node] = node + 1;
            prev[node + 1] = node;
        }
        stackNode = new int[n];
        stackState = new Object[n];
        stackPhase = new boolean[n];
    }

    private long eventTime(int ev) {
        Operation<I, O> op = ops.get(ev >>> 1);
        return (ev & 1) == 0 ? op.invokeTime() : op.completeTime();
    }

    private long eventOrder(int ev) {
        Operation<I, O> op = ops.get(ev >>> 1);
        return (ev & 1) == 0 ? op.invokeOrder() : op.completeOrder();
    }

    @SuppressWarnings("unchecked")
    CheckResult<I, O> run() {
        S state = model.init();
        if (knownRemaining == 0) {
            return linearizable(0);
        }
        // Phase false: try operations with a known outcome; phase true: then the unknown ones.
        boolean unknownPhase = false;
        int node = next[HEAD];
        long steps = 0;
        while (true) {
            steps++;
            if (steps > maxSteps || ((steps & TIME_CHECK_INTERVAL_MASK) == 0 && System.nanoTime() - deadlineNanos > 0)) {
                return gaveUp(steps);
            }
            if (node != end && isCall[node]) {
                int op = opOf[node];
                if (known[op] == unknownPhase) {
                    node = next[node];
                    continue;
                }
                Operation<I, O> operation = ops.get(op);
                S after = known[op]
                        ? model.step(state, operation.input(), operation.output())
                        : model.stepWithUnknownOutput(state, operation.input());
                if (after != null) {
                    flip(op);
                    if (seen.add(setHash, bits, after)) {
                        stackNode[depth] = node;
                        stackState[depth] = state;
                        stackPhase[depth] = unknownPhase;
                        depth++;
                        lift(node);
                        state = after;
                        if (known[op] && --knownRemaining == 0) {
                            return linearizable(steps);
                        }
                        unknownPhase = false;
                        node = next[HEAD];
                        continue;
                    }
                    flip(op);
                }
                node = next[node];
            } else {
                // An operation completes before it could be placed, so this branch is dead.
                if (!unknownPhase) {
                    unknownPhase = true;
                    node = next[HEAD];
                    continue;
                }
                noteDeadEnd(node, state);
                if (depth == 0) {
                    return notLinearizable(steps);
                }
                depth--;
                int call = stackNode[depth];
                state = (S) stackState[depth];
                stackState[depth] = null;
                unknownPhase = stackPhase[depth];
                unlift(call);
                int op = opOf[call];
                flip(op);
                if (known[op]) {
                    knownRemaining++;
                }
                node = next[call];
            }
        }
    }

    private void flip(int op) {
        bits[op >>> 6] ^= 1L << op;
        setHash ^= zobrist[op];
    }

    private void lift(int call) {
        unlink(call);
        unlink(returnOf[call]);
    }

    private void unlift(int call) {
        relink(returnOf[call]);
        relink(call);
    }

    private void unlink(int node) {
        next[prev[node]] = next[node];
        prev[next[node]] = prev[node];
    }

    private void relink(int node) {
        next[prev[node]] = node;
        prev[next[node]] = node;
    }

    private void noteDeadEnd(int blockingNode, Object state) {
        if (depth <= bestDepth || blockingNode == end) {
            return;
        }
        bestDepth = depth;
        bestState = state;
        bestBlocked = opOf[blockingNode];
        List<Integer> candidates = new ArrayList<>();
        for (int node = next[HEAD]; node != blockingNode && candidates.size() < CANDIDATES_SHOWN; node = next[node]) {
            if (isCall[node] && opOf[node] != bestBlocked) {
                candidates.add(opOf[node]);
            }
        }
        bestCandidates = candidates.stream().mapToInt(Integer::intValue).toArray();
        int shown = Math.min(depth, RECENT_SHOWN);
        bestRecent = new int[shown];
        for (int k = 0; k < shown; k++) {
            bestRecent[k] = opOf[stackNode[depth - shown + k]];
        }
    }

    private CheckResult<I, O> linearizable(long steps) {
        List<Operation<I, O>> order = new ArrayList<>(depth);
        for (int k = 0; k < depth; k++) {
            order.add(ops.get(opOf[stackNode[k]]));
        }
        return new CheckResult<>(CheckResult.Outcome.LINEARIZABLE,
                "linearizable: " + ops.size() + " operations, " + seen.size() + " states explored",
                steps, order);
    }

    private CheckResult<I, O> gaveUp(long steps) {
        boolean outOfSteps = steps > maxSteps;
        String why = outOfSteps ? "step budget of " + maxSteps + " exhausted"
                : "time limit of " + timeLimit + " exceeded";
        return new CheckResult<>(CheckResult.Outcome.UNKNOWN, "no verdict: " + why + " after " + (steps - 1)
                + " steps and " + Duration.ofNanos(System.nanoTime() - startNanos).toMillis() + " ms; the deepest dead end had "
                + Math.max(bestDepth, 0) + " of " + ops.size() + " operations placed", steps - 1, List.of());
    }

    @SuppressWarnings("unchecked")
    private CheckResult<I, O> notLinearizable(long steps) {
        S state = (S) bestState;
        String nl = System.lineSeparator();
        StringBuilder b = new StringBuilder();
        b.append("not linearizable: the longest valid order found places ").append(bestDepth).append(" of ")
                .append(ops.size()).append(" operations, and then no order can place").append(nl)
                .append("  ").append(ops.get(bestBlocked)).append(describeStep(state, bestBlocked)).append(nl)
                .append("before it completes. State after the placed operations: ").append(model.describeState(state))
                .append(nl);
        if (bestCandidates.length > 0) {
            b.append("Other operations in flight at that point (none leads to a complete order):").append(nl);
            for (int op : bestCandidates) {
                b.append("  ").append(ops.get(op)).append(describeStep(state, op)).append(nl);
            }
        }
        if (bestRecent.length > 0) {
            b.append("Last placed operations, oldest first:").append(nl);
            for (int op : bestRecent) {
                b.append("  ").append(ops.get(op)).append(nl);
            }
        }
        return new CheckResult<>(CheckResult.Outcome.NOT_LINEARIZABLE, b.toString().stripTrailing(), steps, List.of());
    }

    private String describeStep(S state, int op) {
        Operation<I, O> operation = ops.get(op);
        S after = operation.outcomeKnown()
                ? model.step(state, operation.input(), operation.output())
                : model.stepWithUnknownOutput(state, operation.input());
        return after == null ? "  <- impossible from state " + model.describeState(state)
                : "  <- possible, but every continuation fails";
    }
}
