package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every child process this JVM started, so that none outlives it: a shutdown hook (Ctrl-C,
 * SIGTERM, normal exit) kills whatever is still running, paused ones included (SIGKILL works on a
 * stopped process). Thread-safe.
 */
final class ChildProcesses {

    private static final Logger LOG = LoggerFactory.getLogger(ChildProcesses.class);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ChildProcesses::killAll, "kill-child-processes"));
    }

    private ChildProcesses() {
    }

    static void track(Process p) {
        LIVE.add(p);
        p.onExit().thenRun(() -> LIVE.remove(p));
    }

    static void killAll() {
        for (Process p : LIVE) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : LIVE) {
            try {
                p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (!LIVE.isEmpty()) {
            LOG.warn("{} child processes did not exit after SIGKILL", LIVE.size());
        }
    }
}
