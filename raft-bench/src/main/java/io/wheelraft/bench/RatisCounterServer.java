package io.wheelraft.bench;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One Apache Ratis counter node for the benchmark, written on Ratis's public API: a
 * {@link RaftServer} with the gRPC transport, its segmented log under the data directory (the
 * log worker fsyncs before acknowledging: {@code raft.server.log.unsafe-flush.enabled} is false
 * by default) and an election timeout randomised in [T, 2T), as WheelRaft and SOFAJRaft do.
 *
 * <p>Usage: {@code RatisCounterServer DATA_DIR SELF_INDEX PEERS(host:port,...) ELECTION_TIMEOUT_MS};
 * peer {@code i} of the list gets the id {@code n<i>}. Runs until killed.
 */
public final class RatisCounterServer {

    /** Every node and client of the run uses this group. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(UUID.fromString("5e1f0a3c-0b0e-4c5a-9d6e-000000c0ffee"));

    private RatisCounterServer() {
    }

    /** The group of {@code endpoints}, peer {@code i} with id {@code n<i>}. */
    static RaftGroup group(List<String> endpoints) {
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 0; i < endpoints.size(); i++) {
            peers.add(RaftPeer.newBuilder().setId("n" + i).setAddress(endpoints.get(i)).build());
        }
        return RaftGroup.valueOf(GROUP_ID, peers);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            throw new IllegalArgumentException("usage: RatisCounterServer DATA_DIR SELF_INDEX PEERS ELECTION_TIMEOUT_MS, got " + args.length + " arguments");
        }
        Path data = Path.of(args[0]);
        Files.createDirectories(data);
        int self = Integer.parseInt(args[1]);
        List<String> endpoints = List.of(args[2].split(","));
        if (self < 0 || self >= endpoints.size()) {
            throw new IllegalArgumentException("self index " + self + " is outside the peer list " + endpoints);
        }
        int electionMs = Integer.parseInt(args[3]);
        String selfAddress = endpoints.get(self);
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
        RaftServerConfigKeys.setStorageDir(properties, List.of(data.toFile()));
        GrpcConfigKeys.Server.setHost(properties, selfAddress.substring(0, selfAddress.lastIndexOf(':')));
        GrpcConfigKeys.Server.setPort(properties, Integer.parseInt(selfAddress.substring(selfAddress.lastIndexOf(':') + 1)));
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties, TimeDuration.valueOf(electionMs, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties, TimeDuration.valueOf(2L * electionMs, TimeUnit.MILLISECONDS));
        RaftServer server = RaftServer.newBuilder().setGroup(group(endpoints)).setProperties(properties)
                .setServerId(RaftPeerId.valueOf("n" + self)).setStateMachine(new CounterStateMachine())
                .setOption(RaftStorage.StartupOption.FORMAT).build();
        server.start();
        System.out.println("ratis counter node n" + self + " at " + selfAddress + " started, data " + data.toAbsolutePath());
        new CountDownLatch(1).await(); // serve until the process is killed
    }

    /** The counter: applies 8-byte deltas in log order and answers with the new value (8 bytes). */
    static final class CounterStateMachine extends BaseStateMachine {
        private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
        private long value;

        @Override
        public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
            super.initialize(server, groupId, raftStorage);
            storage.init(raftStorage);
        }

        @Override
        public StateMachineStorage getStateMachineStorage() {
            return storage;
        }

        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto entry = trx.getLogEntry();
            long delta = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer().getLong();
            long now;
            synchronized (this) {
                value += delta;
                now = value;
                updateLastAppliedTermIndex(TermIndex.valueOf(entry));
            }
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(ByteBuffer.allocate(Long.BYTES).putLong(0, now))));
        }
    }
}
