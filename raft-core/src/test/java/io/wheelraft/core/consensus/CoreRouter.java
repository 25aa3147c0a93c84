package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.RequestVoteRequest;
import io.wheelraft.proto.RequestVoteResponse;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A tiny synchronous network between {@link CoreNode}s: {@link #round} delivers every message
 * waiting in the outboxes and hands the answers straight back. Disks are flushed before a
 * follower answers (so its acknowledgement is durable, as the shell guarantees). Nodes can be
 * cut off: messages to or from them vanish. Test thread only.
 */
final class CoreRouter {

    final Map<PeerId, CoreNode> nodes = new LinkedHashMap<>();
    final Set<PeerId> cut = new HashSet<>();
    /** When set, the leader's own disk is flushed after every round (it counts itself only once durable). */
    boolean flushSenders = true;

    CoreRouter(List<CoreNode> members) {
        members.forEach(n -> nodes.put(n.id, n));
    }

    CoreNode node(PeerId p) {
        return nodes.get(p);
    }

    /** Delivers what is queued now; returns how many messages were delivered. */
    int round(long nowMs) {
        int delivered = 0;
        for (CoreNode from : nodes.values()) {
            if (flushSenders) {
                from.flushDisk();
            }
            for (RecordingEffects.Send s : from.fx.takeOutbox()) {
                CoreNode to = nodes.get(s.to());
                if (to == null || cut.contains(from.id) || cut.contains(to.id)) {
                    continue;
                }
                delivered++;
                if (s.message() instanceof RequestVoteRequest req) {
                    RequestVoteResponse resp = to.core.handleRequestVote(req, nowMs);
                    from.core.handleRequestVoteResponse(to.id, req, resp, nowMs);
                } else if (s.message() instanceof AppendEntriesRequest req) {
                    RaftCore.AppendResult r = to.core.handleAppendEntries(req, nowMs);
                    to.flushDisk();
                    from.core.handleAppendEntriesResponse(to.id, req, r.response(), nowMs);
                }
            }
        }
        return delivered;
    }

    /** Rounds until nothing is left to deliver (bounded). */
    void settle(long nowMs) {
        for (int i = 0; i < 100; i++) {
            if (round(nowMs) == 0) {
                return;
            }
        }
        throw new AssertionError("messages still flowing after 100 rounds");
    }
}
