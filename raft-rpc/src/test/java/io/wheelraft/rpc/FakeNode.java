package io.wheelraft.rpc;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeStatus;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.ReadIndexClosure;
import io.wheelraft.core.Role;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** A node that records admin operations; as leader it accepts them, as follower it refuses with NOT_LEADER. */
class FakeNode implements Node {

    final String group;
    final PeerId self;
    volatile PeerId leader;
    final List<String> operations = new CopyOnWriteArrayList<>();
    volatile Configuration configuration;

    FakeNode(String group, PeerId self, PeerId leader, Configuration configuration) {
        this.group = group;
        this.self = self;
        this.leader = leader;
        this.configuration = configuration;
    }

    private void run(String op, Closure done) {
        operations.add(op);
        done.run(isLeader() ? Status.ok() : Status.notLeader(leader));
    }

    @Override public String groupId() { return group; }
    @Override public PeerId nodeId() { return self; }
    @Override public PeerId getLeaderId() { return leader; }
    @Override public boolean isLeader() { return self.equals(leader); }
    /** Whether the node says it is quiet (tests set it). */
    volatile boolean quiet;
    @Override public boolean isQuiet() { return quiet; }
    @Override public void apply(Task task) { throw new UnsupportedOperationException(); }
    @Override public void readIndex(ReadIndexClosure done) { throw new UnsupportedOperationException(); }
    @Override public void readIndex(io.wheelraft.core.ReadOnlyOption option, ReadIndexClosure done) { throw new UnsupportedOperationException(); }
    @Override public void addPeer(PeerId peer, Closure done) { run("addPeer " + peer, done); }
    @Override public void removePeer(PeerId peer, Closure done) { run("removePeer " + peer, done); }
    @Override public void changePeers(Configuration c, Closure done) { run("changePeers " + c, done); }
    @Override public void addLearners(List<PeerId> learners, Closure done) { run("addLearners " + learners, done); }
    @Override public void removeLearners(List<PeerId> learners, Closure done) { run("removeLearners " + learners, done); }
    @Override public void addWitness(PeerId witness, Closure done) { run("addWitness " + witness, done); }
    @Override public void setPriority(PeerId peer, int priority, Closure done) { run("setPriority " + peer + " " + priority, done); }
    @Override public void transferLeadershipTo(PeerId peer, Closure done) { run("transferLeadershipTo " + peer, done); }
    @Override public void snapshot(Closure done) {
        operations.add("snapshot");
        done.run(Status.error(RaftError.BUSY, "a snapshot is already being saved"));
    }
    @Override public List<PeerId> listPeers() { return new ArrayList<>(configuration.peers()); }
    @Override public java.util.concurrent.CompletableFuture<Void> leaderChange(long term, PeerId known) {
        return term != 4 || !java.util.Objects.equals(known, leader)
                ? java.util.concurrent.CompletableFuture.completedFuture(null) : new java.util.concurrent.CompletableFuture<>();
    }

    @Override public NodeStatus status() {
        return new NodeStatus(group, self, isLeader() ? Role.LEADER : Role.FOLLOWER, 4, leader, 10, 9, 1, 12,
                configuration, isLeader() ? Map.of(PeerId.parse("127.0.0.1:2"), 11L) : Map.of(), java.time.Instant.parse("2026-01-02T03:04:05.123456Z"));
    }
    @Override public void shutdown(Closure done) { if (done != null) done.run(Status.ok()); }
    @Override public void join() { }
}
