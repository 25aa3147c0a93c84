package io.wheelraft.rpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AddWitnessRequest;
import io.wheelraft.proto.AdminResponse;
import io.wheelraft.proto.AdminResult;
import io.wheelraft.proto.ChangePeersRequest;
import io.wheelraft.proto.GroupsSummaryRequest;
import io.wheelraft.proto.GroupsSummaryResponse;
import io.wheelraft.proto.LearnersChangeRequest;
import io.wheelraft.proto.LedGroupsRequest;
import io.wheelraft.proto.LedGroupsResponse;
import io.wheelraft.proto.NodeSelector;
import io.wheelraft.proto.NodeStatusRequest;
import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.proto.PeerChangeRequest;
import io.wheelraft.proto.SetPriorityRequest;
import io.wheelraft.proto.SnapshotNowRequest;
import io.wheelraft.proto.TransferLeaderRequest;
import io.wheelraft.rpc.proto.AdminServiceGrpc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Consumer;

/**
 * The server side of {@code AdminService}: status and membership operations on the nodes of
 * {@link NodeRegistry}. An unknown group or peer is NOT_FOUND and a malformed request
 * INVALID_ARGUMENT (gRPC status); the outcome of the operation itself, including its failure,
 * comes back in {@link AdminResult}. Node methods return at once and answer through closures,
 * so the worker thread is never held. Thread-safe.
 */
final class AdminServiceImpl extends AdminServiceGrpc.AdminServiceImplBase {

    private static final Logger LOG = LoggerFactory.getLogger(AdminServiceImpl.class);
    /** Numeric group ids at or above this travel as strings in {@link LedGroupsResponse} (see admin.proto). */
    static final int NUMBERED_LIMIT = 1 << 24;

    private final NodeRegistry nodes;

    AdminServiceImpl(NodeRegistry nodes) {
        this.nodes = nodes;
    }

    @Override
    public void status(NodeStatusRequest request, StreamObserver<NodeStatusResponse> out) {
        Node node = resolve(request.getNode(), out);
        if (node == null) {
            return;
        }
        NodeStatus s = node.status();
        NodeStatusResponse.Builder b = NodeStatusResponse.newBuilder()
                .setResult(AdminResult.newBuilder().setSuccess(true))
                .setGroupId(s.groupId())
                .setSelf(String.valueOf(s.self()))
                .setRole(roleLabel(s))
                .setTerm(s.term())
                .setLeader(s.leader() == null ? "" : s.leader().toString())
                .setCommitIndex(s.commitIndex())
                .setAppliedIndex(s.appliedIndex())
                .setFirstLogIndex(s.firstLogIndex())
                .setLastLogIndex(s.lastLogIndex());
        if (s.configuration() != null) {
            b.setConfiguration(s.configuration().toEntry());
        }
        if (s.roleSince() != null) {
            b.setRoleSinceUnixMicros(ChronoUnit.MICROS.between(Instant.EPOCH, s.roleSince()));
        }
        if (s.followerMatchIndex() != null) {
            for (Map.Entry<PeerId, Long> e : s.followerMatchIndex().entrySet()) {
                b.putFollowerMatchIndex(e.getKey().toString(), e.getValue());
            }
        }
        reply(out, b.build());
    }

    /**
     * The role as {@code status} prints it: a follower, candidate or learner that its own
     * configuration marks as a witness is shown as {@code witness}, so operators tell it from a
     * data replica; leader, repairing, error and shutdown are shown as they are.
     */
    static String roleLabel(NodeStatus s) {
        boolean markedWitness = s.configuration() != null && s.self() != null && s.configuration().isWitness(s.self());
        return switch (s.role()) {
            case FOLLOWER, CANDIDATE, LEARNER -> markedWitness ? "witness" : s.role().label();
            default -> s.role().label();
        };
    }

    /** Counts the nodes of the process, those that lead, and those that are quiet ({@link Node#isQuiet()}). */
    @Override
    public void groupsSummary(GroupsSummaryRequest request, StreamObserver<GroupsSummaryResponse> out) {
        int[] counts = new int[3]; // hosted, leading, quiet
        nodes.forEachNode(node -> {
            counts[0]++;
            if (node.isLeader()) {
                counts[1]++;
            }
            if (node.isQuiet()) {
                counts[2]++;
            }
        });
        reply(out, GroupsSummaryResponse.newBuilder().setResult(AdminResult.newBuilder().setSuccess(true))
                .setGroups(counts[0]).setLeaders(counts[1]).setQuiet(counts[2]).build());
    }

    /**
     * The groups whose node here leads, each once even if several of its nodes are hosted here.
     * Numeric ids are gathered in a bit set (at most {@link #NUMBERED_LIMIT} bits, 2 MiB) rather
     * than a hash set: a tool may poll this many times a second on a process leading 50,000 groups.
     */
    @Override
    public void ledGroups(LedGroupsRequest request, StreamObserver<LedGroupsResponse> out) {
        LedTally tally = new LedTally(request.getWithSince());
        nodes.forEachNode(tally);
        int groups = tally.hosted;
        BitSet numbered = tally.numbered;
        Map<Integer, Long> numberedSince = tally.numberedSince;
        Map<String, Long> named = tally.named;
        LedGroupsResponse.Builder b = LedGroupsResponse.newBuilder().setResult(AdminResult.newBuilder().setSuccess(true)).setGroups(groups);
        for (int g = numbered.nextSetBit(0); g >= 0; g = numbered.nextSetBit(g + 1)) {
            b.addNumbered(g);
            if (numberedSince != null) {
                b.addNumberedSinceMs(numberedSince.get(g));
            }
        }
        if (named != null) {
            b.addAllNamed(named.keySet());
            if (request.getWithSince()) {
                b.addAllNamedSinceMs(named.values());
            }
        }
        reply(out, b.build());
    }

    /** What {@link #ledGroups} gathers from one visit of the nodes. */
    private static final class LedTally implements java.util.function.Consumer<Node> {
        private final boolean withSince;
        private final BitSet numbered = new BitSet();
        // Only with_since: each led group's first leadership start (a group led by two nodes here keeps the earlier).
        private final Map<Integer, Long> numberedSince;
        private Map<String, Long> named;
        private int hosted;

        LedTally(boolean withSince) {
            this.withSince = withSince;
            this.numberedSince = withSince ? new HashMap<>() : null;
        }

        @Override
        public void accept(Node node) {
            hosted++;
            if (!node.isLeader()) {
                return;
            }
            String id = node.groupId();
            long since = withSince ? node.status().roleSince().toEpochMilli() : 0;
            int number = numberedId(id);
            if (number >= 0) {
                numbered.set(number);
                if (numberedSince != null) {
                    numberedSince.merge(number, since, Math::min);
                }
            } else {
                if (named == null) {
                    named = new LinkedHashMap<>();
                }
                named.merge(id, since, Math::min);
            }
        }
    }

    /**
     * The number a group id spells when it travels as one: a plain decimal (digits only, no leading
     * zero except "0" itself) below {@link #NUMBERED_LIMIT}; -1 for any other id, which travels as
     * a string. Only such ids are numbers, so every id comes back exactly as it was.
     */
    static int numberedId(String id) {
        int n = id.length();
        if (n == 0 || n > 8 || (n > 1 && id.charAt(0) == '0')) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value < NUMBERED_LIMIT ? value : -1;
    }

    @Override
    public void addPeer(PeerChangeRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.addPeer(peer("peer", request.getPeer()), closure(node, out)));
    }

    @Override
    public void removePeer(PeerChangeRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.removePeer(peer("peer", request.getPeer()), closure(node, out)));
    }

    @Override
    public void addLearners(LearnersChangeRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.addLearners(peers("learners", request.getLearnersList()), closure(node, out)));
    }

    @Override
    public void removeLearners(LearnersChangeRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.removeLearners(peers("learners", request.getLearnersList()), closure(node, out)));
    }

    @Override
    public void changePeers(ChangePeersRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> {
            List<PeerId> voters = peers("new_peers", request.getNewPeersList());
            List<PeerId> learners = request.getNewLearnersList().isEmpty() ? List.of() : peers("new_learners", request.getNewLearnersList());
            // members that stay keep their witness mark and priority
            node.changePeers(node.status().configuration().withMembers(voters, learners), closure(node, out));
        });
    }

    @Override
    public void transferLeader(TransferLeaderRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.transferLeadershipTo(peer("target", request.getTarget()), closure(node, out)));
    }

    @Override
    public void addWitness(AddWitnessRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.addWitness(peer("witness", request.getWitness()), closure(node, out)));
    }

    @Override
    public void setPriority(SetPriorityRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> {
            if (request.getPriority() < 0) {
                throw new IllegalArgumentException("priority " + request.getPriority() + " must be 0 (never leads) or more");
            }
            node.setPriority(peer("peer", request.getPeer()), request.getPriority(), closure(node, out));
        });
    }

    @Override
    public void snapshot(SnapshotNowRequest request, StreamObserver<AdminResponse> out) {
        withNode(request.getNode(), out, node -> node.snapshot(closure(node, out)));
    }

    /** Resolves the node and runs the operation; bad arguments become INVALID_ARGUMENT. */
    private void withNode(NodeSelector selector, StreamObserver<AdminResponse> out, Consumer<Node> operation) {
        Node node = resolve(selector, out);
        if (node == null) {
            return;
        }
        try {
            operation.accept(node);
        } catch (IllegalArgumentException e) {
            fail(out, Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        } catch (RuntimeException e) {
            LOG.warn("admin operation on {} failed", node.nodeId(), e);
            fail(out, Status.INTERNAL.withDescription("admin operation failed on " + node.nodeId() + ": " + e));
        }
    }

    private Node resolve(NodeSelector selector, StreamObserver<?> out) {
        if (out instanceof ServerCallStreamObserver<?> s) {
            s.setOnCancelHandler(() -> { });
        }
        try {
            return nodes.find(selector.getGroupId(), selector.getPeerId());
        } catch (NoSuchElementException e) {
            fail(out, Status.NOT_FOUND.withDescription(e.getMessage()));
        } catch (IllegalArgumentException e) {
            fail(out, Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        }
        return null;
    }

    private static Closure closure(Node node, StreamObserver<AdminResponse> out) {
        return status -> {
            AdminResult.Builder r = AdminResult.newBuilder().setSuccess(status.isOk());
            if (!status.isOk()) {
                r.setError(status.code().name()).setMessage(status.message());
                PeerId leader = status.leaderHint() != null ? status.leaderHint() : node.getLeaderId();
                if (leader != null) {
                    r.setLeaderHint(leader.toString());
                }
            }
            reply(out, AdminResponse.newBuilder().setResult(r).build());
        };
    }

    private static PeerId peer(String field, String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException(field + " is empty");
        }
        try {
            return PeerId.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
        }
    }

    private static List<PeerId> peers(String field, List<String> texts) {
        if (texts.isEmpty()) {
            throw new IllegalArgumentException(field + " is empty");
        }
        List<PeerId> result = new ArrayList<>(texts.size());
        for (String t : texts) {
            result.add(peer(field, t));
        }
        return result;
    }

    private static <T> void reply(StreamObserver<T> out, T value) {
        try {
            out.onNext(value);
            out.onCompleted();
        } catch (RuntimeException e) {
            LOG.debug("admin answer could not be sent: {}", e.toString());
        }
    }

    private static void fail(StreamObserver<?> out, Status status) {
        try {
            out.onError(status.asRuntimeException());
        } catch (RuntimeException e) {
            LOG.debug("admin error could not be sent: {}", e.toString());
        }
    }
}
