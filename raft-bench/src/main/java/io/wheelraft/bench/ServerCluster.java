package io.wheelraft.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Three server processes of one system on free loopback ports, each with a fresh data directory
 * and a log file under the run directory. Every process started here is also killed by a shutdown
 * hook (Ctrl-C, SIGTERM, an exception), so none outlives the runner.
 *
 * <p>Not thread-safe: the runner drives it.
 */
final class ServerCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ServerCluster.class);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ServerCluster::killAll, "kill-bench-servers"));
    }

    /** How to start node {@code index} of a system, given its data directory and every node's endpoint. */
    interface NodeCommand {
        List<String> args(int index, Path dataDir, List<String> endpoints);
    }

    private final List<String> endpoints;
    private final List<Process> processes = new ArrayList<>();

    private ServerCluster(List<String> endpoints) {
        this.endpoints = List.copyOf(endpoints);
    }

    /**
     * Starts {@code size} nodes: {@code java JVM_OPTIONS [perNodeJvmOptions] ARGS...}.
     *
     * @param extraJvmOptions per node index, extra JVM options (e.g. a flight recording), may be empty
     */
    static ServerCluster start(int size, Path runDir, List<String> jvmOptions, List<List<String>> extraJvmOptions, NodeCommand command)
            throws IOException {
        List<String> endpoints = new ArrayList<>();
        for (int port : freePorts(size)) {
            endpoints.add("127.0.0.1:" + port);
        }
        ServerCluster cluster = new ServerCluster(endpoints);
        try {
            for (int i = 0; i < size; i++) {
                Path dataDir = runDir.resolve("node" + i);
                Files.createDirectories(dataDir);
                List<String> cmd = new ArrayList<>();
                cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                cmd.addAll(jvmOptions);
                if (i < extraJvmOptions.size()) {
                    cmd.addAll(extraJvmOptions.get(i));
                }
                cmd.addAll(command.args(i, dataDir, endpoints));
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(runDir.resolve("node" + i + ".log").toFile()))
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                LIVE.add(p);
                cluster.processes.add(p);
            }
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /**
     * Waits until every {@code host:port} accepts a TCP connection, polling every 50 ms.
     *
     * @return false if {@code deadlineNanos} ({@link System#nanoTime()}) passed first
     */
    static boolean awaitListening(List<String> endpoints, long deadlineNanos) throws InterruptedException {
        for (String endpoint : endpoints) {
            int colon = endpoint.lastIndexOf(':');
            InetSocketAddress address = new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
            while (true) {
                try (Socket probe = new Socket()) {
                    probe.connect(address, 1000);
                    break;
                } catch (IOException notYet) {
                    if (System.nanoTime() - deadlineNanos >= 0) {
                        return false;
                    }
                    Thread.sleep(50); // the JVM is still starting: poll its port again shortly
                }
            }
        }
        return true;
    }

    List<String> endpoints() {
        return endpoints;
    }

    /** CPU time the server processes have used so far, all threads, in nanoseconds (0 where the OS does not say). */
    long serverCpuNanos() {
        long total = 0;
        for (Process p : processes) {
            total += p.info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(0L);
        }
        return total;
    }

    /** Nodes that have exited (a crash at start-up shows here before the leader wait times out). */
    List<Integer> exited() {
        List<Integer> dead = new ArrayList<>();
        for (int i = 0; i < processes.size(); i++) {
            if (!processes.get(i).isAlive()) {
                dead.add(i);
            }
        }
        return dead;
    }

    /** SIGTERM (so a flight recording is written), then SIGKILL whatever is left after 10 s. */
    @Override
    public void close() {
        processes.forEach(Process::destroy);
        for (Process p : processes) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
            LIVE.remove(p);
        }
    }

    private static void killAll() {
        for (Process p : LIVE) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        if (!LIVE.isEmpty()) {
            LOG.warn("killed {} benchmark server processes on exit", LIVE.size());
        }
    }

    /** Distinct ports that were free a moment ago (bound together, so they differ). */
    static List<Integer> freePorts(int n) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            List<Integer> ports = new ArrayList<>();
            sockets.forEach(s -> ports.add(s.getLocalPort()));
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing a probe socket cannot matter
                }
            }
        }
    }
}
