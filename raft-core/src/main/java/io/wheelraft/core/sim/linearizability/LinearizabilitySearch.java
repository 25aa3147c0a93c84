package io.wheelraft.core.sim.linearizability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One run of the linearizability search over one history (see {@link LinearizabilityChecker} for
 * the algorithm and its pruning rules).
 *
 * <p>Data layout, chosen so that a step allocates nothing but a memo entry: events are numbered
 * 1..2n in time order. The invocations and completions of operations with a known outcome form
 * a doubly linked list over int arrays; the invocations of unknown-outcome operations (whose
 * completion is "never") form a second one, so the many of them that linger until the end do
 * not slow down every scan. Placing an operation unlinks its events, backtracking relinks them
 * (last out, first in), both O(1). The placed set is a {@code long[]} bit set with an
 * incrementally kept Zobrist hash for the memo.
 *
 * <p>Single use and single-threaded.
 */
final class LinearizabilitySearch<S, I, O> {

    private static final int HEAD = 0;
    /*
     * Phases of trying the candidates of one node, in this order, and the pruning that keeps the
     * search complete:
     * READS: a read whose answer fits the current state can be placed first without loss (it
     *   changes nothing and is already invoked), so if one fits it is the only move tried.
     * KNOWN: the other operations with a known outcome.
     * UNKNOWN: unknown-outcome operations, only when no known one leads anywhere. Those with
     *   equal inputs are interchangeable, so only the earliest one not yet placed is tried.
     */
    private static final byte READS = 0;
    private static final byte KNOWN = 1;
    private static final byte UNKNOWN = 2;
    /** Bounded passes tried before the complete search (see searchPass). */
    private static final int[] CHAIN_BOUNDS = {1, 2, 4};
    private static final int UNBOUNDED = Integer.MAX_VALUE;
    private static final int TIME_CHECK_INTERVAL_MASK = 1023;
    private static final int RECENT_SHOWN = 8;
    private static final int CANDIDATES_SHOWN = 20;

    // Outcomes of trying to place one operation.
    private static final int REJECTED = 0;
    private static final int ALREADY_SEEN = 1;
    private static final int PLACED = 2;
    private static final int COMPLETE = 3;

    private final Model<S, I, O> model;
    private final List<Operation<I, O>> ops;
    private final long deadlineNanos;
    private final long maxSteps;
    private final Duration timeLimit;
    private final long startNanos = System.nanoTime();

    // Event nodes 1..2n in time order; HEAD (0) and `end` (2n+1) are the sentinels of both lists.
    private final int end;
    private final int[] opOf;
    private final int[] returnOf;
    private final boolean[] isCall;
    // List of the events of known-outcome operations.
    private final int[] next;
    private final int[] prev;
    // List of the invocations of unknown-outcome operations.
    private final int[] unext;
    private final int[] uprev;

    private final boolean[] known;
    private final boolean[] readOnly;
    /** For an unknown-outcome operation: the previous one (in invocation order) with an equal input, or -1. */
    private final int[] previousTwin;
    private final long[] zobrist;
    private final long[] bits;
    private long setHash;
    private int knownRemaining;
    private SeenStates seen;

    // The current node of the search.
    private Object state;
    private byte phase;
    private int chain;
    private int node;
    private int limit;

    // The stack of placed operations: the invocation node, and the state, phase and chain before it.
    private final int[] stackNode;
    private final Object[] stackState;
    private final byte[] stackPhase;
    private final int[] stackChain;
    private int depth;
    private long steps;

    // The deepest dead end of the current pass, for the explanation.
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
        // Number operations in invocation order, so the placed set is mostly a dense prefix (see SeenStates).
        List<Operation<I, O>> sorted = new ArrayList<>(operations);
        sorted.sort(Comparator.<Operation<I, O>>comparingLong(Operation::invokeTime).thenComparingLong(Operation::invokeOrder));
        this.ops = sorted;
        int n = sorted.size();

        known = new boolean[n];
        readOnly = new boolean[n];
        previousTwin = new int[n];
        zobrist = new long[n];
        SplittableRandom random = new SplittableRandom(0x5EED_11AE_A7AB_1EL);
        Map<Object, Integer> lastUnknownWithInput = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Operation<I, O> op = sorted.get(i);
            known[i] = op.outcomeKnown();
            readOnly[i] = model.isReadOnly(op.input());
            zobrist[i] = random.nextLong();
            previousTwin[i] = -1;
            if (known[i]) {
                knownRemaining++;
            } else {
                Integer twin = lastUnknownWithInput.put(op.input(), i);
                previousTwin[i] = twin == null ? -1 : twin;
            }
        }
        bits = new long[(n + 63) >>> 6];

        // Events: 2*i is the invocation of op i, 2*i+1 its completion.
        Integer[] events = new Integer[2 * n];
        for (int i = 0; i < events.length; i++) {
            events[i] = i;
        }
        Arrays.sort(events, Comparator.<Integer>comparingLong(this::eventTime)
                .thenComparingLong(this::eventOrder)
                .thenComparingInt(ev -> ev & 1) // at equal time and order: invocations first (overlap)
                .thenComparingInt(ev -> ev >>> 1));
        end = 2 * n + 1;
        opOf = new int[end + 1];
        returnOf = new int[end + 1];
        isCall = new boolean[end + 1];
        next = new int[end + 1];
        prev = new int[end + 1];
        unext = new int[end + 1];
        uprev = new int[end + 1];
        int[] nodeOfEvent = new int[2 * n];
        for (int pos = 0; pos < events.length; pos++) {
            int ev = events[pos];
            nodeOfEvent[ev] = pos + 1;
            opOf[pos + 1] = ev >>> 1;
            isCall[pos + 1] = (ev & 1) == 0;
        }
        for (int i = 0; i < n; i++) {
            returnOf[nodeOfEvent[2 * i]] = nodeOfEvent[2 * i + 1];
        }
        int lastKnown = HEAD;
        int lastUnknown = HEAD;
        for (int e = 1; e < end; e++) {
            if (known[opOf[e]]) {
                next[lastKnown] = e;
                prev[e] = lastKnown;
                lastKnown = e;
            } else if (isCall[e]) {
                unext[lastUnknown] = e;
                uprev[e] = lastUnknown;
                lastUnknown = e;
            }
        }
        next[lastKnown] = end;
        prev[end] = lastKnown;
        unext[lastUnknown] = end;
        uprev[end] = lastUnknown;
        stackNode = new int[n];
        stackState = new Object[n];
        stackPhase = new byte[n];
        stackChain = new int[n];
    }

    private long eventTime(int ev) {
        Operation<I, O> op = ops.get(ev >>> 1);
        return (ev & 1) == 0 ? op.invokeTime() : op.completeTime();
    }

    private long eventOrder(int ev) {
        Operation<I, O> op = ops.get(ev >>> 1);
        return (ev & 1) == 0 ? op.invokeOrder() : op.completeOrder();
    }

    CheckResult<I, O> run() {
        if (knownRemaining == 0) {
            return linearizable();
        }
        int unknownCount = ops.size() - knownRemaining;
        for (int bound : CHAIN_BOUNDS) {
            if (bound >= unknownCount) {
                break;
            }
            CheckResult<I, O> result = searchPass(bound);
            if (result != null) {
                return result;
            }
        }
        CheckResult<I, O> result = searchPass(UNBOUNDED);
        return result != null ? result : notLinearizable();
    }

    /**
     * One depth-first search. With a chain bound, at most that many unknown-outcome operations
     * may be placed in a row (then a known one must follow): an incomplete but much smaller
     * search that finds the usual linearizations fast. Unbounded, the search is complete.
     *
     * @return the verdict, or null if this pass found no linearization (which proves nothing
     *         unless the pass was unbounded)
     */
    private CheckResult<I, O> searchPass(int maxChain) {
        seen = new SeenStates();
        bestDepth = -1;
        state = model.init();
        phase = READS;
        chain = 0;
        node = next[HEAD];
        while (true) {
            steps++;
            if (steps > maxSteps || ((steps & TIME_CHECK_INTERVAL_MASK) == 0 && System.nanoTime() - deadlineNanos > 0)) {
                return gaveUp();
            }
            if (phase == UNKNOWN) {
                if (node != end && node < limit) {
                    int op = opOf[node];
                    int outcome = previousTwin[op] < 0 || isPlaced(previousTwin[op]) ? tryPlace(maxChain) : REJECTED;
                    if (outcome == COMPLETE) {
                        return linearizable();
                    }
                    if (outcome != PLACED) {
                        node = unext[node];
                    }
                    continue;
                }
                noteDeadEnd(limit);
            } else if (node != end && isCall[node]) {
                if (readOnly[opOf[node]] != (phase == READS)) {
                    node = next[node];
                    continue;
                }
                int outcome = tryPlace(maxChain);
                if (outcome == COMPLETE) {
                    return linearizable();
                }
                if (outcome == PLACED) {
                    continue;
                }
                // A read that fits but whose subtree already failed: this whole node fails (see READS).
                if (outcome == REJECTED || phase != READS) {
                    node = next[node];
                    continue;
                }
            } else {
                // `node` is the first completion still pending: every candidate of this phase is tried.
                if (phase == READS) {
                    phase = KNOWN;
                    node = next[HEAD];
                    continue;
                }
                if (chain < maxChain && unext[HEAD] != end) {
                    phase = UNKNOWN;
                    limit = node;
                    node = unext[HEAD];
                    continue;
                }
                noteDeadEnd(node);
            }
            if (!backtrack()) {
                return null;
            }
        }
    }

    /**
     * Tries to place the operation invoked at {@code node} from the current state; on success
     * pushes it and moves to the first phase of the new node.
     */
    @SuppressWarnings("unchecked")
    private int tryPlace(int maxChain) {
        int op = opOf[node];
        Operation<I, O> operation = ops.get(op);
        S after = known[op]
                ? model.step((S) state, operation.input(), operation.output())
                : model.stepWithUnknownOutput((S) state, operation.input());
        if (after == null) {
            return REJECTED;
        }
        int chainAfter = known[op] ? 0 : chain + 1;
        flip(op);
        // In a bounded pass a node's options depend on its chain, so the chain is part of the key.
        if (!seen.add(setHash, bits, after, maxChain == UNBOUNDED ? 0 : chainAfter)) {
            flip(op);
            return ALREADY_SEEN;
        }
        stackNode[depth] = node;
        stackState[depth] = state;
        stackPhase[depth] = phase;
        stackChain[depth] = chain;
        depth++;
        if (known[op]) {
            unlink(next, prev, node);
            unlink(next, prev, returnOf[node]);
            if (--knownRemaining == 0) {
                state = after;
                return COMPLETE;
            }
        } else {
            unlink(unext, uprev, node);
        }
        state = after;
        chain = chainAfter;
        phase = READS;
        node = next[HEAD];
        return PLACED;
    }

    /**
     * Undoes placements until one leaves an untried candidate, and moves to that candidate. A read
     * placed in the READS phase was the only move worth trying at its node, so undoing it fails
     * that node too: keep popping.
     *
     * @return false if the stack ran empty (the pass failed)
     */
    private boolean backtrack() {
        do {
            if (depth == 0) {
                return false;
            }
            depth--;
            int call = stackNode[depth];
            state = stackState[depth];
            stackState[depth] = null;
            phase = stackPhase[depth];
            chain = stackChain[depth];
            int op = opOf[call];
            flip(op);
            if (known[op]) {
                relink(next, prev, returnOf[call]);
                relink(next, prev, call);
                knownRemaining++;
                node = next[call];
            } else {
                relink(unext, uprev, call);
                node = unext[call];
                limit = firstPendingCompletion();
            }
        } while (phase == READS);
        return true;
    }

    /** The first completion still in the list of known-outcome events: candidates are the invocations before it. */
    private int firstPendingCompletion() {
        int e = next[HEAD];
        while (e != end && isCall[e]) {
            e = next[e];
        }
        return e;
    }

    private boolean isPlaced(int op) {
        return (bits[op >>> 6] & (1L << op)) != 0;
    }

    private void flip(int op) {
        bits[op >>> 6] ^= 1L << op;
        setHash ^= zobrist[op];
    }

    private static void unlink(int[] next, int[] prev, int node) {
        next[prev[node]] = next[node];
        prev[next[node]] = prev[node];
    }

    private static void relink(int[] next, int[] prev, int node) {
        next[prev[node]] = node;
        prev[next[node]] = node;
    }

    private void noteDeadEnd(int blockingNode) {
        if (depth <= bestDepth || blockingNode == end) {
            return;
        }
        bestDepth = depth;
        bestState = state;
        bestBlocked = opOf[blockingNode];
        List<Integer> candidates = new ArrayList<>();
        for (int e = next[HEAD]; e != blockingNode && candidates.size() < CANDIDATES_SHOWN; e = next[e]) {
            if (isCall[e] && opOf[e] != bestBlocked) {
                candidates.add(opOf[e]);
            }
        }
        for (int e = unext[HEAD]; e != end && e < blockingNode && candidates.size() < CANDIDATES_SHOWN; e = unext[e]) {
            candidates.add(opOf[e]);
        }
        bestCandidates = candidates.stream().mapToInt(Integer::intValue).toArray();
        int shown = Math.min(depth, RECENT_SHOWN);
        bestRecent = new int[shown];
        for (int k = 0; k < shown; k++) {
            bestRecent[k] = opOf[stackNode[depth - shown + k]];
        }
    }

    private CheckResult<I, O> linearizable() {
        List<Operation<I, O>> order = new ArrayList<>(depth);
        for (int k = 0; k < depth; k++) {
            order.add(ops.get(opOf[stackNode[k]]));
        }
        return new CheckResult<>(CheckResult.Outcome.LINEARIZABLE,
                "linearizable: " + ops.size() + " operations, " + (seen == null ? 0 : seen.size()) + " states explored",
                steps, order);
    }

    private CheckResult<I, O> gaveUp() {
        boolean outOfSteps = steps > maxSteps;
        String why = outOfSteps ? "step budget of " + maxSteps + " exhausted"
                : "time limit of " + timeLimit + " exceeded";
        return new CheckResult<>(CheckResult.Outcome.UNKNOWN, "no verdict: " + why + " after " + (steps - 1)
                + " steps and " + Duration.ofNanos(System.nanoTime() - startNanos).toMillis() + " ms; the deepest dead end had "
                + Math.max(bestDepth, 0) + " of " + ops.size() + " operations placed", steps - 1, List.of());
    }

    @SuppressWarnings("unchecked")
    private CheckResult<I, O> notLinearizable() {
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
