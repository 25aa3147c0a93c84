package io.wheelraft.rpc;

import io.grpc.ManagedChannel;
import io.wheelraft.proto.AddWitnessRequest;
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

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A blocking client of one process's admin service, for command-line tools. Each method waits at
 * most {@code timeoutMs}; a transport failure (unreachable, unknown group: NOT_FOUND, bad
 * argument: INVALID_ARGUMENT, deadline) is thrown as {@link io.grpc.StatusRuntimeException},
 * while the operation's own failure comes back in the returned {@link AdminResult}.
 * Thread-safe; close it when done.
 */
public final class AdminClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final AdminServiceGrpc.AdminServiceBlockingStub stub;

    public AdminClient(String endpoint, RpcOptions options) {
        this.channel = RaftChannels.open(endpoint, options);
        this.stub = AdminServiceGrpc.newBlockingStub(channel);
    }

    /** Status of the node of {@code groupId} at that process ({@code peerId} may be empty if it hosts one). */
    public NodeStatusResponse status(String groupId, String peerId, long timeoutMs) {
        return stub(timeoutMs).status(NodeStatusRequest.newBuilder().setNode(selector(groupId, peerId)).build());
    }

    /** How many groups that process hosts, leads and has quiet (one call however many it hosts). */
    public GroupsSummaryResponse groupsSummary(long timeoutMs) {
        return stub(timeoutMs).groupsSummary(GroupsSummaryRequest.getDefaultInstance());
    }

    /**
     * The groups that process leads now, numeric ids packed ({@link LedGroupsResponse#getNumberedList()})
     * and others by name; {@link #groupIds(LedGroupsResponse)} gives them all as ids.
     */
    public LedGroupsResponse ledGroups(long timeoutMs) {
        return ledGroups(timeoutMs, false);
    }

    /** As {@link #ledGroups(long)}; {@code withSince}: also when each group's node there became leader (its clock). */
    public LedGroupsResponse ledGroups(long timeoutMs, boolean withSince) {
        return stub(timeoutMs).ledGroups(LedGroupsRequest.newBuilder().setWithSince(withSince).build());
    }

    /** Every group id of a {@link #ledGroups} answer, numeric ones first, as strings. */
    public static List<String> groupIds(LedGroupsResponse led) {
        List<String> ids = new ArrayList<>(led.getNumberedCount() + led.getNamedCount());
        for (int i = 0; i < led.getNumberedCount(); i++) {
            ids.add(Integer.toString(led.getNumbered(i)));
        }
        ids.addAll(led.getNamedList());
        return ids;
    }

    public AdminResult addPeer(String groupId, String peerId, String peer, long timeoutMs) {
        return stub(timeoutMs).addPeer(PeerChangeRequest.newBuilder().setNode(selector(groupId, peerId)).setPeer(peer).build()).getResult();
    }

    public AdminResult removePeer(String groupId, String peerId, String peer, long timeoutMs) {
        return stub(timeoutMs).removePeer(PeerChangeRequest.newBuilder().setNode(selector(groupId, peerId)).setPeer(peer).build()).getResult();
    }

    public AdminResult addLearners(String groupId, String peerId, List<String> learners, long timeoutMs) {
        return stub(timeoutMs).addLearners(LearnersChangeRequest.newBuilder().setNode(selector(groupId, peerId))
                .addAllLearners(learners).build()).getResult();
    }

    public AdminResult removeLearners(String groupId, String peerId, List<String> learners, long timeoutMs) {
        return stub(timeoutMs).removeLearners(LearnersChangeRequest.newBuilder().setNode(selector(groupId, peerId))
                .addAllLearners(learners).build()).getResult();
    }

    public AdminResult changePeers(String groupId, String peerId, List<String> newPeers, List<String> newLearners, long timeoutMs) {
        return stub(timeoutMs).changePeers(ChangePeersRequest.newBuilder().setNode(selector(groupId, peerId))
                .addAllNewPeers(newPeers).addAllNewLearners(newLearners).build()).getResult();
    }

    public AdminResult transferLeader(String groupId, String peerId, String target, long timeoutMs) {
        return stub(timeoutMs).transferLeader(TransferLeaderRequest.newBuilder().setNode(selector(groupId, peerId))
                .setTarget(target).build()).getResult();
    }

    /** Adds {@code witness} as a voting witness (run on the leader). */
    public AdminResult addWitness(String groupId, String peerId, String witness, long timeoutMs) {
        return stub(timeoutMs).addWitness(AddWitnessRequest.newBuilder().setNode(selector(groupId, peerId)).setWitness(witness).build())
                .getResult();
    }

    /** Sets the election priority of member {@code peer} (run on the leader); 0 never leads. */
    public AdminResult setPriority(String groupId, String peerId, String peer, int priority, long timeoutMs) {
        return stub(timeoutMs).setPriority(SetPriorityRequest.newBuilder().setNode(selector(groupId, peerId)).setPeer(peer)
                .setPriority(priority).build()).getResult();
    }

    public AdminResult snapshot(String groupId, String peerId, long timeoutMs) {
        return stub(timeoutMs).snapshot(SnapshotNowRequest.newBuilder().setNode(selector(groupId, peerId)).build()).getResult();
    }

    /**
     * After a failed call to a process that is (re)starting: try to connect at once on the next
     * call instead of after gRPC's reconnect backoff, which grows to minutes.
     */
    public void reconnectNow() {
        channel.resetConnectBackoff();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private AdminServiceGrpc.AdminServiceBlockingStub stub(long timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("admin timeoutMs must be positive, got " + timeoutMs);
        }
        return stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
    }

    private static NodeSelector selector(String groupId, String peerId) {
        return NodeSelector.newBuilder().setGroupId(groupId).setPeerId(peerId == null ? "" : peerId).build();
    }
}
