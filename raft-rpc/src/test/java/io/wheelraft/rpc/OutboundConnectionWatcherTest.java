package io.wheelraft.rpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The watcher on a scripted channel and a hand-run scheduler: no network, no sleeps. The channel
 * behaves like gRPC's since pick-first made TRANSIENT_FAILURE sticky: once failed, it reports no
 * further state change while its reconnect attempts keep failing.
 */
class OutboundConnectionWatcherTest {

    private static final String PEER = "127.0.0.1:7001";

    private final ScriptedChannel channel = new ScriptedChannel();
    private final HandRunScheduler scheduler = new HandRunScheduler();
    private final List<String> lost = new CopyOnWriteArrayList<>();

    private void startWatching() {
        ConnectionListeners listeners = new ConnectionListeners();
        listeners.add(lost::add);
        new OutboundConnectionWatcher(PEER, channel, listeners, scheduler,
                RpcOptions.builder().reconnectBackoff(20, 200).build()).start();
    }

    @Test
    void keepsReconnectingOnItsOwnBackoffWhileTheChannelStaysFailed() {
        startWatching();
        channel.moveTo(ConnectivityState.READY);
        channel.moveTo(ConnectivityState.TRANSIENT_FAILURE);

        assertEquals(List.of(PEER), lost, "the break is reported once");
        List<Long> delays = new ArrayList<>();
        for (int step = 0; step < 6; step++) {
            delays.add(scheduler.runNext());
        }

        assertEquals(List.of(20L, 40L, 80L, 160L, 200L, 200L), delays, "doubling from the minimum, capped at the maximum");
        assertEquals(6, channel.reconnectNudges, "every step nudges the still-failed channel, though no state callback came");
        assertEquals(List.of(PEER), lost, "retries report nothing more");
    }

    @Test
    void stopsRetryingOnceThePeerIsBackAndStartsAfreshOnTheNextBreak() {
        startWatching();
        channel.moveTo(ConnectivityState.READY);
        channel.moveTo(ConnectivityState.TRANSIENT_FAILURE);
        scheduler.runNext();
        scheduler.runNext();

        channel.moveTo(ConnectivityState.READY);
        scheduler.runNext(); // the step already planned finds the channel READY

        assertEquals(2, channel.reconnectNudges);
        assertTrue(scheduler.isEmpty(), "nothing left to retry");

        channel.moveTo(ConnectivityState.TRANSIENT_FAILURE);
        assertEquals(20L, scheduler.runNext(), "a new break starts again from the minimum backoff");
        assertEquals(List.of(PEER, PEER), lost);
    }

    @Test
    void failuresReportedAgainWhileARetryIsPlannedDoNotStackRetries() {
        startWatching();
        channel.moveTo(ConnectivityState.READY);
        channel.moveTo(ConnectivityState.TRANSIENT_FAILURE);
        channel.moveTo(ConnectivityState.CONNECTING); // a channel that does report its attempts
        channel.moveTo(ConnectivityState.TRANSIENT_FAILURE);

        assertEquals(1, scheduler.pending(), "one retry planned, not one per report");
    }

    /** A channel whose state the test sets; callbacks run at once, as gRPC's do for a changed state. */
    private static final class ScriptedChannel extends ManagedChannel {
        private ConnectivityState state = ConnectivityState.IDLE;
        private final List<Watch> watches = new ArrayList<>();
        int reconnectNudges;

        private record Watch(ConnectivityState source, Runnable callback) {
        }

        void moveTo(ConnectivityState next) {
            state = next;
            List<Runnable> due = new ArrayList<>();
            for (Iterator<Watch> it = watches.iterator(); it.hasNext(); ) {
                Watch w = it.next();
                if (w.source() != next) {
                    it.remove();
                    due.add(w.callback());
                }
            }
            due.forEach(Runnable::run);
        }

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            return state;
        }

        @Override
        public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
            if (source != state) {
                callback.run();
            } else {
                watches.add(new Watch(source, callback));
            }
        }

        @Override
        public void resetConnectBackoff() {
            reconnectNudges++;
        }

        @Override
        public ManagedChannel shutdown() {
            return this;
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public ManagedChannel shutdownNow() {
            return this;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }

        @Override
        public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
            throw new UnsupportedOperationException("no calls in this test");
        }

        @Override
        public String authority() {
            return PEER;
        }
    }

    /** Records scheduled tasks; the test runs them one at a time, in order. */
    private static final class HandRunScheduler extends AbstractExecutorService implements ScheduledExecutorService {
        private record Task(Runnable task, long delayMs) {
        }

        private final List<Task> tasks = new ArrayList<>();

        /** Runs the oldest planned task and returns the delay it was planned with. */
        long runNext() {
            assertTrue(!tasks.isEmpty(), "no task planned");
            Task t = tasks.remove(0);
            t.task().run();
            return t.delayMs();
        }

        boolean isEmpty() {
            return tasks.isEmpty();
        }

        int pending() {
            return tasks.size();
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            tasks.add(new Task(command, unit.toMillis(delay)));
            return null; // the watcher never cancels
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void execute(Runnable command) {
            schedule(command, 0, TimeUnit.MILLISECONDS);
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }
}
