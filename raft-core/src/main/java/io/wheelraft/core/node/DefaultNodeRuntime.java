package io.wheelraft.core.node;

import io.wheelraft.timer.Clock;
import io.wheelraft.timer.Timer;
import io.wheelraft.timer.Timers;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The production {@link NodeRuntime}: a timing wheel (by default the process-wide one) and the
 * clock it runs on ({@link io.wheelraft.timer.Timer#clock()}), and three
 * fixed pools sized by the number of cores (Raft lanes), a small fixed number (disk), and cores
 * (apply). Every node of the process shares them; thread count does not grow with groups.
 */
public final class DefaultNodeRuntime implements NodeRuntime, AutoCloseable {

    private static volatile DefaultNodeRuntime shared;

    private final Timer timer;
    private final ExecutorService raftPool;
    private final ExecutorService diskPool;
    private final ExecutorService applyPool;

    public DefaultNodeRuntime(Timer timer, int raftThreads, int diskThreads, int applyThreads) {
        this.timer = timer;
        this.raftPool = Executors.newFixedThreadPool(raftThreads, daemon("wheelraft-raft"));
        this.diskPool = Executors.newFixedThreadPool(diskThreads, daemon("wheelraft-disk"));
        this.applyPool = Executors.newFixedThreadPool(applyThreads, daemon("wheelraft-apply"));
    }

    /** The process-wide runtime, created on first use and never closed by nodes. */
    public static DefaultNodeRuntime shared() {
        DefaultNodeRuntime r = shared;
        if (r == null) {
            synchronized (DefaultNodeRuntime.class) {
                r = shared;
                if (r == null) {
                    int cores = Runtime.getRuntime().availableProcessors();
                    r = new DefaultNodeRuntime(Timers.shared(), Math.max(2, cores), Math.max(2, Math.min(4, cores)), Math.max(2, cores));
                    shared = r;
                }
            }
        }
        return r;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public Timer timer() {
        return timer;
    }

    @Override
    public Clock clock() {
        return timer.clock(); // the node reads the clock its timeouts are measured on
    }

    @Override
    public ExecutorService raftPool() {
        return raftPool;
    }

    @Override
    public ExecutorService diskPool() {
        return diskPool;
    }

    @Override
    public ExecutorService applyPool() {
        return applyPool;
    }

    @Override
    public void close() {
        raftPool.shutdown();
        diskPool.shutdown();
        applyPool.shutdown();
    }
}
