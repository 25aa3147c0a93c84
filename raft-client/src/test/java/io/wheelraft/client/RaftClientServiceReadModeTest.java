package io.wheelraft.client;

import io.grpc.stub.ServerCallStreamObserver;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientCalls;
import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.Query;
import io.wheelraft.client.proto.ReadConsistency;
import io.wheelraft.core.Node;
import io.wheelraft.core.ReadOnlyOption;
import io.wheelraft.core.StateMachineAdapter;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The service asks its node for the read its client chose, whatever the node's
 * {@code readOnlyOption}: LEASE for a lease query, READ_INDEX for a linearizable one, never the
 * node-default {@code readIndex(done)}.
 */
class RaftClientServiceReadModeTest {

    /** Records how the service asked a leader node for reads (and never answers them). */
    private final List<String> asked = new ArrayList<>();

    private final Node leader = (Node) Proxy.newProxyInstance(Node.class.getClassLoader(), new Class<?>[] {Node.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "groupId" -> "g";
                case "isLeader" -> true;
                case "readIndex" -> {
                    asked.add(args.length == 2 ? String.valueOf(args[0]) : "node default");
                    yield null;
                }
                default -> throw new UnsupportedOperationException(method.getName());
            });

    private void query(ReadConsistency consistency) {
        RaftClientService service = new RaftClientService();
        service.addGroup(leader, new ExactlyOnceStateMachine(new StateMachineAdapter() {
            @Override
            public void onApply(io.wheelraft.core.Iterator iterator) {
            }
        }));
        service.calls(new IdleStream()).onNext(ClientCalls.newBuilder().addCalls(ClientCall.newBuilder().setCallId(1).setGroupId("g")
                .setQuery(Query.newBuilder().setConsistency(consistency))).build());
    }

    @Test
    void leaseQueryAsksTheNodeForALeaseRead() {
        query(ReadConsistency.READ_CONSISTENCY_LEASE);
        assertEquals(List.of(ReadOnlyOption.LEASE.name()), asked);
    }

    @Test
    void linearizableQueryAsksTheNodeForAQuorumRound() {
        query(ReadConsistency.READ_CONSISTENCY_LINEARIZABLE);
        assertEquals(List.of(ReadOnlyOption.READ_INDEX.name()), asked);
    }

    /** A stream whose client never reads: the test looks only at what the node was asked. */
    private static final class IdleStream extends ServerCallStreamObserver<ClientReplies> {
        @Override public boolean isCancelled() { return false; }
        @Override public void setOnCancelHandler(Runnable onCancelHandler) { }
        @Override public void setCompression(String compression) { }
        @Override public boolean isReady() { return false; }
        @Override public void setOnReadyHandler(Runnable onReadyHandler) { }
        @Override public void request(int count) { }
        @Override public void setMessageCompression(boolean enable) { }
        @Override public void disableAutoInboundFlowControl() { }
        @Override public void disableAutoRequest() { }
        @Override public void onNext(ClientReplies value) { }
        @Override public void onError(Throwable t) { }
        @Override public void onCompleted() { }
    }
}
