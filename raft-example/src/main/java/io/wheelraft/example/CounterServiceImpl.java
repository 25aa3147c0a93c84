package io.wheelraft.example;

import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelraft.client.ExactlyOnceStateMachine;
import io.wheelraft.client.RaftClientService;
import io.wheelraft.core.Node;

/**
 * The counter's server side, all of it from raft-client: the {@link CounterStateMachine} wrapped
 * in an {@link ExactlyOnceStateMachine} (the node's state machine: increments exactly once) and
 * the generic {@link RaftClientService} that clients reach with {@code RaftClient}. Registered on
 * the node's gRPC server as one service ({@link #bindService()}).
 *
 * <p>On a witness ({@link #witness}) there is no counter and no state machine: the service
 * answers every call as a witness's, and clients go to the data members.
 *
 * <p>Thread-safe; {@link #attach} once the node has started (until then calls are answered
 * NOT_LEADER, which clients retry).
 */
public final class CounterServiceImpl implements BindableService {

    /** The only Raft group of the counter service. */
    public static final String GROUP_ID = "counter";

    /** Null on a witness. */
    private final ExactlyOnceStateMachine stateMachine;
    private final RaftClientService service = new RaftClientService();

    /** The service of a witness: no counter, every call refused as a witness's. */
    static CounterServiceImpl witness(MeterRegistry registry) {
        return new CounterServiceImpl(registry);
    }

    private CounterServiceImpl(MeterRegistry registry) {
        this.stateMachine = null;
        Gauge.builder("counter.client.witness.refused", service, RaftClientService::refusedAsWitness)
                .description("calls refused because this member is a witness").register(registry);
    }

    public CounterServiceImpl(CounterStateMachine counter) {
        this(counter, new SimpleMeterRegistry());
    }

    public CounterServiceImpl(CounterStateMachine counter, MeterRegistry registry) {
        this.stateMachine = new ExactlyOnceStateMachine(counter);
        Gauge.builder("counter.client.sessions", stateMachine, ExactlyOnceStateMachine::sessionCount)
                .description("clients the retry table remembers").register(registry);
        Gauge.builder("counter.client.busy", service, RaftClientService::refusedBusy)
                .description("calls refused BUSY (the node's queue was full)").register(registry);
        registerLeaderQuestions(service, registry);
    }

    /** {@code counter.client.leader.questions}: the who-leads questions {@code service} received (single and many-group servers). */
    static void registerLeaderQuestions(RaftClientService service, MeterRegistry registry) {
        FunctionCounter.builder("counter.client.leader.questions", service, RaftClientService::leaderCalls)
                .description("clients' who-leads questions received (each held until a leader is known, or its wait ends)").register(registry);
    }

    /** The state machine the node must run: the counter inside the exactly-once wrapper; null on a witness. */
    public ExactlyOnceStateMachine stateMachine() {
        return stateMachine;
    }

    /** Starts serving the counter's group on {@code started}. */
    public void attach(Node started) {
        if (stateMachine == null) {
            service.addWitnessGroup(started);
        } else {
            service.addGroup(started, stateMachine);
        }
    }

    @Override
    public ServerServiceDefinition bindService() {
        return service.bindService();
    }
}
