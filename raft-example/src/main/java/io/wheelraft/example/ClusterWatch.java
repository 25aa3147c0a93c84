package io.wheelraft.example;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Polls every node's status in the background (every {@link #PERIOD_MS} ms) and records each
 * leader change in the {@link ChaosRecorder}: the node that leads, its term, and when it was first
 * seen leading. Counts the elections won after the first leader and the highest term seen, so the
 * report's election count is right in every mode. Thread-safe: one polling thread writes, any
 * thread reads.
 */
final class ClusterWatch implements AutoCloseable {

    static final long PERIOD_MS = 20;

    private final LocalCluster cluster;
    private final Map<String, String> names;
    private final ChaosRecorder recorder;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long leaderTerm = -1;
    private volatile long firstTerm = -1;
    private volatile long maxTerm;
    private volatile int elections;

    ClusterWatch(LocalCluster cluster, Map<String, String> names, ChaosRecorder recorder) {
        this.cluster = cluster;
        this.names = names;
        this.recorder = recorder;
        this.thread = new Thread(this::poll, "chaos-cluster-watch");
        thread.setDaemon(true);
        thread.start();
    }

    private void poll() {
        List<String> endpoints = cluster.endpoints();
        while (running) {
            for (String e : endpoints) {
                Optional<LocalCluster.NodeView> v = cluster.view(e, 100);
                if (v.isEmpty()) {
                    continue;
                }
                long term = v.get().term();
                if (term > maxTerm) {
                    maxTerm = term;
                }
                if (v.get().leads() && term > leaderTerm) {
                    if (leaderTerm >= 0) {
                        elections++;
                    } else {
                        firstTerm = term;
                    }
                    leaderTerm = term;
                    recorder.event(ChaosRecorder.EventKind.LEADER, names.getOrDefault(e, e) + " leads, term " + term);
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(PERIOD_MS); // sampling period, not a wait for a condition
            } catch (InterruptedException ie) {
                return;
            }
        }
    }

    /** Leaders elected after the first one the watch saw. */
    int elections() {
        return elections;
    }

    /** Terms the cluster moved through after the first leader's (elections, won or not). */
    long termChanges() {
        return firstTerm < 0 ? 0 : maxTerm - firstTerm;
    }

    long maxTerm() {
        return maxTerm;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(2000);
    }
}
