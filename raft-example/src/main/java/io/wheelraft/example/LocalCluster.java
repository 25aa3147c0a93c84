package io.wheelraft.example;

import io.wheelraft.proto.NodeStatusResponse;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Three (or more) counter servers as child processes on free loopback ports (or each in its own
 * network namespace, see {@link NetworkNamespaces}), each with its own data directory under
 * {@code baseDir}, for the chaos runner and the demo. Observes them through
 * the admin service's status. Not thread-safe: one controller drives it; {@link #close()} kills
 * every server.
 */
final class LocalCluster implements AutoCloseable {

    /**
     * What one node reported.
     *
     * @param roleSinceMicros when the node took this role in this term, by its own wall clock (µs since the epoch); 0 if it does not say
     */
    record NodeView(String endpoint, String role, long term, String leader, long commit, long applied, long last, long roleSinceMicros) {
        boolean leads() {
            return role.equals("leader");
        }
    }

    /** How often conditions are polled: small next to the timings measured. */
    static final long POLL_MS = 2;

    private final List<ServerProcess> servers = new ArrayList<>();
    private final ClusterChannels channels;
    private final List<String> witnesses;

    LocalCluster(Path baseDir, int size, int electionTimeoutMs, int snapshotIntervalSecs) throws IOException {
        this(baseDir, size, 0, electionTimeoutMs, snapshotIntervalSecs);
    }

    /** {@code size} servers on loopback ports, the last {@code witnesses} of them witnesses ({@code server --witnesses}). */
    LocalCluster(Path baseDir, int size, int witnesses, int electionTimeoutMs, int snapshotIntervalSecs) throws IOException {
        this(baseDir, loopbackEndpoints(size), witnesses, null, electionTimeoutMs, snapshotIntervalSecs);
    }

    /**
     * A cluster whose servers live in the given network: server {@code i} listens on
     * {@code network.host(i)} and runs in its namespace (see {@link NetworkNamespaces}).
     */
    LocalCluster(Path baseDir, NetworkNamespaces network, int size, int electionTimeoutMs, int snapshotIntervalSecs) throws IOException {
        this(baseDir, network, size, 0, electionTimeoutMs, snapshotIntervalSecs);
    }

    /** As above, the last {@code witnesses} servers witnesses. */
    LocalCluster(Path baseDir, NetworkNamespaces network, int size, int witnesses, int electionTimeoutMs, int snapshotIntervalSecs)
            throws IOException {
        this(baseDir, networkEndpoints(network, size), witnesses, network, electionTimeoutMs, snapshotIntervalSecs);
    }

    private LocalCluster(Path baseDir, List<String> endpoints, int witnessCount, NetworkNamespaces network, int electionTimeoutMs,
                         int snapshotIntervalSecs) throws IOException {
        int size = endpoints.size();
        if (witnessCount < 0 || witnessCount >= size) {
            throw new IllegalArgumentException("a cluster of " + size + " needs at least one data node; " + witnessCount + " witnesses asked");
        }
        this.witnesses = List.copyOf(endpoints.subList(size - witnessCount, size));
        List<String> args = serverArgs(endpoints, witnesses, electionTimeoutMs, snapshotIntervalSecs);
        Path archive = ServerProcess.recordClassArchive(baseDir);
        for (int i = 0; i < size; i++) {
            servers.add(new ServerProcess(endpoints.get(i), baseDir.resolve("node" + (i + 1)), baseDir.resolve("node" + (i + 1) + ".log"), args,
                    archive, network == null ? List.of() : network.launcher(i + 1)));
        }
        channels = new ClusterChannels(endpoints);
    }

    /** The {@code server} options every node gets (besides --data and --self). */
    static List<String> serverArgs(List<String> endpoints, List<String> witnesses, int electionTimeoutMs, int snapshotIntervalSecs) {
        List<String> args = new ArrayList<>(List.of("--peers", String.join(",", endpoints), "--election-timeout-ms",
                Integer.toString(electionTimeoutMs), "--snapshot-interval-secs", Integer.toString(snapshotIntervalSecs)));
        if (!witnesses.isEmpty()) {
            args.add("--witnesses");
            args.add(String.join(",", witnesses));
        }
        return List.copyOf(args);
    }

    private static List<String> loopbackEndpoints(int size) throws IOException {
        List<String> endpoints = new ArrayList<>();
        for (int port : freePorts(size)) {
            endpoints.add("127.0.0.1:" + port);
        }
        return endpoints;
    }

    /** In its own namespace every port is free: the servers use 7001, 7002, ... on their own addresses. */
    static List<String> networkEndpoints(NetworkNamespaces network, int size) {
        List<String> endpoints = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            endpoints.add(network.host(i) + ":" + (7000 + i));
        }
        return endpoints;
    }

    /** Distinct ports that were free a moment ago (bound to port 0 together, then released). */
    static List<Integer> freePorts(int n) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                s.setReuseAddress(true);
                sockets.add(s);
            }
            return sockets.stream().map(ServerSocket::getLocalPort).toList();
        } finally {
            for (ServerSocket s : sockets) {
                s.close();
            }
        }
    }

    List<ServerProcess> servers() {
        return servers;
    }

    ClusterChannels channels() {
        return channels;
    }

    List<String> endpoints() {
        return channels.endpoints();
    }

    /** The endpoints that run as witnesses (they hold no data). */
    List<String> witnesses() {
        return witnesses;
    }

    ServerProcess server(String endpoint) {
        return servers.stream().filter(s -> s.endpoint().equals(endpoint)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no server " + endpoint));
    }

    void startAll() throws IOException {
        for (ServerProcess s : servers) {
            s.start();
        }
    }

    /** The node's status, or empty if it does not answer within {@code timeoutMs}. */
    Optional<NodeView> view(String endpoint, long timeoutMs) {
        try {
            NodeStatusResponse r = channels.status(endpoint, timeoutMs);
            return Optional.of(new NodeView(endpoint, r.getRole(), r.getTerm(), r.getLeader(), r.getCommitIndex(), r.getAppliedIndex(),
                    r.getLastLogIndex(), r.getRoleSinceUnixMicros()));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The first node among {@code endpoints} that reports itself leader with a term above {@code aboveTerm}. */
    Optional<NodeView> leaderAmong(List<String> endpoints, long aboveTerm) {
        for (String e : endpoints) {
            Optional<NodeView> v = view(e, 200);
            if (v.isPresent() && v.get().leads() && v.get().term() > aboveTerm) {
                return v;
            }
        }
        return Optional.empty();
    }

    /** Waits until some node of {@code endpoints} leads in a term above {@code aboveTerm}. */
    NodeView awaitLeader(List<String> endpoints, long aboveTerm, long timeoutMs) throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Optional<NodeView> v = leaderAmong(endpoints, aboveTerm);
            if (v.isPresent()) {
                return v.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("no leader among " + endpoints + " above term " + aboveTerm + " within " + timeoutMs + " ms");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MS);
        }
    }

    /** Waits until {@code endpoint} has applied at least {@code index}. */
    NodeView awaitApplied(String endpoint, long index, long timeoutMs) throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Optional<NodeView> v = view(endpoint, 200);
            if (v.isPresent() && v.get().applied() >= index) {
                return v.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException(endpoint + " did not apply index " + index + " within " + timeoutMs + " ms (last seen "
                        + v.map(NodeView::toString).orElse("down") + ")");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MS);
        }
    }

    /**
     * Waits until {@code endpoint} holds everything up to {@code index}: a data node has applied
     * it; a witness, which applies no data, knows it committed.
     */
    NodeView awaitCaughtUp(String endpoint, long index, long timeoutMs) throws TimeoutException, InterruptedException {
        if (!witnesses.contains(endpoint)) {
            return awaitApplied(endpoint, index, timeoutMs);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Optional<NodeView> v = view(endpoint, 200);
            if (v.isPresent() && v.get().commit() >= index) {
                return v.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("witness " + endpoint + " did not learn index " + index + " committed within " + timeoutMs
                        + " ms (last seen " + v.map(NodeView::toString).orElse("down") + ")");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MS);
        }
    }

    /** Waits for a condition polled every few milliseconds. */
    static void await(String what, long timeoutMs, BooleanSupplier condition) throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException(what + " did not happen within " + timeoutMs + " ms");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MS);
        }
    }

    @Override
    public void close() {
        for (ServerProcess s : servers) {
            try {
                s.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        channels.close();
    }
}
