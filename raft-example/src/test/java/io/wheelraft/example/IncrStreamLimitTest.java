package io.wheelraft.example;

import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.core.Node;
import io.wheelraft.core.Status;
import io.wheelraft.core.Task;
import io.wheelraft.rpc.proto.counter.CounterOutcome;
import io.wheelraft.rpc.proto.counter.IncrCall;
import io.wheelraft.rpc.proto.counter.IncrCalls;
import io.wheelraft.rpc.proto.counter.IncrReplies;
import io.wheelraft.rpc.proto.counter.IncrReply;
import io.wheelraft.rpc.proto.counter.IncrRequest;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One IncrStream may hold only so many unanswered increments; the rest are refused BUSY at once. */
class IncrStreamLimitTest {

    /** A leader that accepts every task and answers none until told to. */
    private final List<Task> held = new ArrayList<>();
    private final Node node = (Node) Proxy.newProxyInstance(Node.class.getClassLoader(), new Class<?>[] {Node.class},
            (proxy, method, args) -> {
                if (method.getName().equals("apply")) {
                    held.add((Task) args[0]);
                }
                return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
            });
    private final List<IncrReply> replies = new ArrayList<>();

    private static IncrCall call(long id) {
        return IncrCall.newBuilder().setCallId(id)
                .setRequest(IncrRequest.newBuilder().setClientId("c" + id).setSequence(1).setDelta(1)).build();
    }

    @Test
    void callsBeyondTheLimitAreRefusedBusyAndAcceptedAgainOnceAnswered() {
        CounterServiceImpl service = new CounterServiceImpl(new CounterStateMachine(), new SimpleMeterRegistry(), 2);
        service.attach(node);
        StreamObserver<IncrCalls> calls = service.incrStream(new StreamObserver<>() {
            @Override
            public void onNext(IncrReplies value) {
                replies.addAll(value.getRepliesList());
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        });
        calls.onNext(IncrCalls.newBuilder().addCalls(call(1)).addCalls(call(2)).addCalls(call(3)).build());
        assertEquals(2, held.size(), "two increments reach the node");
        assertEquals(1, replies.size());
        assertEquals(3, replies.get(0).getCallId());
        assertEquals(CounterOutcome.COUNTER_OUTCOME_FAILED, replies.get(0).getResponse().getOutcome());
        assertTrue(replies.get(0).getResponse().getMessage().startsWith("BUSY"), replies.get(0).getResponse().getMessage());

        IncrClosure first = (IncrClosure) held.remove(0).done(); // the node applies one and answers it
        first.setResult(IncrClosure.Result.APPLIED, 1);
        first.run(Status.ok());
        assertEquals(2, replies.size());
        assertEquals(CounterOutcome.COUNTER_OUTCOME_OK, replies.get(1).getResponse().getOutcome());
        calls.onNext(IncrCalls.newBuilder().addCalls(call(4)).build());
        assertEquals(2, held.size(), "room again for one more");
    }
}
