package io.wheelraft.core.sim;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * State machine safety across a whole simulated run (Raft §5.4.3): every node that applies index
 * i applies the same term and bytes there. Any disagreement, or a node applying out of order,
 * fails at once with the seed.
 */
final class CommittedLog {

    private record Applied(long term, ByteBuffer data) {
    }

    private final Map<Long, Applied> byIndex = new HashMap<>();
    private final String replayHint;
    private long highest;

    CommittedLog(String replayHint) {
        this.replayHint = replayHint;
    }

    void record(int node, long index, long term, ByteBuffer data) {
        Applied a = new Applied(term, data.duplicate());
        Applied prior = byIndex.putIfAbsent(index, a);
        if (prior != null && (prior.term() != term || !prior.data().equals(a.data()))) {
            throw new AssertionError("node " + node + " applied a different entry at index " + index + " (term " + term
                    + " vs " + prior.term() + "): committed entry changed; " + replayHint);
        }
        highest = Math.max(highest, index);
    }

    long highestApplied() {
        return highest;
    }
}
