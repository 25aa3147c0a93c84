package io.wheelraft.core.node;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.wheelraft.core.Task;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;

/**
 * The production {@link ProposalQueue}: one Disruptor ring per process (not per node). Its single
 * consumer thread groups consecutive events by node and hands each node one batch per Disruptor
 * batch, so a burst of {@code apply} calls becomes one log append.
 */
public final class DisruptorProposalQueue implements ProposalQueue {

    private static final class Slot {
        Consumer<List<Task>> sink;
        Task task;
    }

    private final Disruptor<Slot> disruptor;
    private final RingBuffer<Slot> ring;

    public DisruptorProposalQueue(int capacity, ThreadFactory threadFactory) {
        disruptor = new Disruptor<>(Slot::new, capacity, threadFactory, ProducerType.MULTI, new SleepingWaitStrategy());
        disruptor.handleEventsWith(new Batcher());
        ring = disruptor.start();
    }

    @Override
    public boolean offer(Consumer<List<Task>> sink, Task task) {
        return ring.tryPublishEvent((slot, seq) -> {
            slot.sink = sink;
            slot.task = task;
        });
    }

    @Override
    public void close() {
        disruptor.shutdown();
    }

    private static final class Batcher implements EventHandler<Slot> {
        private final Map<Consumer<List<Task>>, List<Task>> pending = new IdentityHashMap<>();

        @Override
        public void onEvent(Slot slot, long sequence, boolean endOfBatch) {
            pending.computeIfAbsent(slot.sink, k -> new ArrayList<>()).add(slot.task);
            slot.sink = null;
            slot.task = null;
            if (endOfBatch || pending.size() > 64) {
                pending.forEach(Consumer::accept);
                pending.clear();
            }
        }
    }
}
