package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A private network for a local cluster (Linux, root, iproute2): one network namespace per
 * server, each joined to a bridge in the root namespace by a veth pair, with an address per
 * server ({@code 10.77.X.i/24}) and two for the bridge ({@code 10.77.X.254}, through which this
 * process reaches every server, and {@code 10.77.X.253} for the link relay of {@link LinkFaults}).
 * {@link #isolate} sets a server's veth (bridge side) down: from then on every packet to or
 * from that server is dropped silently (no reset, no ICMP), as in a black-hole partition or a
 * hung switch port; {@link #heal} sets it up again and TCP resumes where it was.
 *
 * <p>Names carry this JVM's pid ({@code wr<pid>n1} for a namespace, {@code wrb<pid>} for the
 * bridge, {@code wrv<pid>n1} for a veth), so concurrent runs never collide, and anything left by a
 * run whose JVM is gone (killed with SIGKILL) is deleted by the next one, which also kills the servers
 * that run left in its namespaces. Everything is deleted by
 * {@link #close()} and, should the JVM exit first (Ctrl-C, SIGTERM), by a shutdown hook.
 *
 * <p>Not thread-safe: one controller drives it (the shutdown hook only deletes).
 */
final class NetworkNamespaces implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NetworkNamespaces.class);
    private static final String PREFIX = "wr";
    /** Names this code makes: wr<pid>n<i> (namespace), wrb<pid> (bridge), wrv<pid>n<i> (veth, bridge side). */
    private static final Pattern OURS = Pattern.compile("wr[bvp]?(\\d+)(n\\d+)?");
    private static final Set<NetworkNamespaces> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(NetworkNamespaces::deleteQuietly), "delete-network-namespaces"));
    }

    private final long pid = ProcessHandle.current().pid();
    private final String bridge = "wrb" + pid;
    private final int subnet;
    private final int size;
    private boolean deleted;

    private NetworkNamespaces(int subnet, int size) {
        this.subnet = subnet;
        this.size = size;
    }

    /** Null when this machine can make namespaces (Linux, root, {@code ip} with netns support); otherwise why not, in one line. */
    static String unsupportedReason() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return "it needs Linux (it puts each server in its own network namespace), this is " + System.getProperty("os.name");
        }
        if (!uidIsZero()) {
            return "it needs root (it puts each server in its own network namespace); run it as root, e.g. with sudo";
        }
        try {
            run("ip", "netns", "list");
        } catch (IOException e) {
            return "it needs iproute2's `ip` with network namespace support (" + e.getMessage() + "); install iproute2";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking for `ip netns`";
        }
        return null;
    }

    private static boolean uidIsZero() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[1].equals("0");
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /**
     * Makes {@code size} namespaces on a fresh bridge, after deleting what runs that are no longer
     * alive left behind. The subnet is a {@code 10.77.X.0/24} no address or route of the root
     * namespace uses, searched from an X derived from the pid, so concurrent runs pick different ones.
     */
    static NetworkNamespaces create(int size) throws IOException, InterruptedException {
        if (!OPEN.isEmpty()) {
            throw new IllegalStateException("one private network per JVM at a time (the names carry the pid)");
        }
        deleteStale();
        NetworkNamespaces n = new NetworkNamespaces(freeSubnet(), size);
        OPEN.add(n);
        try {
            n.build();
        } catch (IOException | InterruptedException | RuntimeException e) {
            n.close();
            throw e;
        }
        return n;
    }

    private void build() throws IOException, InterruptedException {
        run("ip", "link", "add", bridge, "type", "bridge");
        run("ip", "addr", "add", "10.77." + subnet + ".254/24", "dev", bridge);
        // A second address for the link relay (LinkFaults), so that a server's packets to the relay
        // can be told from its answers to the clients, which reach it from .254.
        run("ip", "addr", "add", relayHost() + "/24", "dev", bridge);
        run("ip", "link", "set", bridge, "up");
        for (int i = 1; i <= size; i++) {
            String ns = namespace(i);
            String inner = PREFIX + "p" + pid + "n" + i;
            run("ip", "netns", "add", ns);
            run("ip", "link", "add", veth(i), "type", "veth", "peer", "name", inner);
            run("ip", "link", "set", inner, "netns", ns);
            run("ip", "link", "set", veth(i), "master", bridge);
            run("ip", "link", "set", veth(i), "up");
            run("ip", "-n", ns, "addr", "add", host(i) + "/24", "dev", inner);
            run("ip", "-n", ns, "link", "set", inner, "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
        }
    }

    /** The address of server {@code i} (1-based). */
    String host(int i) {
        return "10.77." + subnet + "." + i;
    }

    /** The root namespace's second address on the bridge, where the link relay listens and connects from (see {@link LinkFaults}). */
    String relayHost() {
        return "10.77." + subnet + ".253";
    }

    /** The namespace of server {@code i} (1-based). */
    String namespace(int i) {
        return PREFIX + pid + "n" + i;
    }

    /** What runs a command inside server {@code i}'s namespace: {@code ip netns exec NS}, which execs it (same pid). */
    List<String> launcher(int i) {
        return List.of("ip", "netns", "exec", namespace(i));
    }

    private String veth(int i) {
        return PREFIX + "v" + pid + "n" + i;
    }

    /** Runs a command inside server {@code i}'s namespace; returns its output, a non-zero exit is an IOException naming the command. */
    String runIn(int i, String... cmd) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(launcher(i));
        all.addAll(List.of(cmd));
        return run(all.toArray(String[]::new));
    }

    /** Drops every packet to and from server {@code i} from now on, silently. */
    void isolate(int i) throws IOException, InterruptedException {
        run("ip", "link", "set", veth(i), "down");
    }

    /** Undoes {@link #isolate}. */
    void heal(int i) throws IOException, InterruptedException {
        run("ip", "link", "set", veth(i), "up");
    }

    @Override
    public void close() {
        deleteQuietly();
        OPEN.remove(this);
    }

    private synchronized void deleteQuietly() {
        if (deleted) {
            return;
        }
        deleted = true;
        List<String> left = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            // Deleting the namespace also destroys the veth pair whose inner end lives in it.
            deleteLink(veth(i), left);
            deleteNamespace(namespace(i), left);
        }
        deleteLink(bridge, left);
        if (!left.isEmpty()) {
            LOG.warn("could not delete {}; the next chaos run in namespaces deletes them, or by hand: ip netns del NAME / ip link del NAME", left);
        }
    }

    /**
     * Deletes namespaces and links named like ours whose run (the pid in the name) is no longer
     * alive, or which carry this JVM's pid (left by a dead JVM whose pid was reused: this JVM has
     * none open when it calls this).
     */
    static void deleteStale() throws IOException, InterruptedException {
        List<String> left = new ArrayList<>();
        for (String line : run("ip", "netns", "list").split("\n")) {
            String name = line.trim().split("\\s+")[0];
            if (stale(name)) {
                // Servers of a run killed with SIGKILL outlive it in their namespace: they are that run's children.
                List<String> pids = List.of(run("ip", "netns", "pids", name).split("\\s+")).stream().filter(p -> !p.isEmpty()).toList();
                LOG.info("deleting network namespace {} left by an earlier run{}", name, pids.isEmpty() ? "" : ", and killing its processes " + pids);
                for (String p : pids) {
                    ProcessHandle.of(Long.parseLong(p)).ifPresent(ProcessHandle::destroyForcibly);
                }
                deleteNamespace(name, left);
            }
        }
        for (String line : run("ip", "-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1) {
                String name = parts[1].split("@")[0].trim();
                if (stale(name)) {
                    LOG.info("deleting link {} left by an earlier run", name);
                    deleteLink(name, left);
                }
            }
        }
        if (!left.isEmpty()) {
            LOG.warn("could not delete {} left by an earlier run", left);
        }
    }

    private static boolean stale(String name) {
        Matcher m = OURS.matcher(name);
        if (!m.matches()) {
            return false;
        }
        long owner = Long.parseLong(m.group(1));
        return owner == ProcessHandle.current().pid() || ProcessHandle.of(owner).map(h -> !h.isAlive()).orElse(true);
    }

    private static int freeSubnet() throws IOException, InterruptedException {
        String used = run("ip", "-4", "-o", "addr", "show") + run("ip", "-4", "route", "show");
        int start = (int) (ProcessHandle.current().pid() % 250);
        for (int k = 0; k < 250; k++) {
            int x = 1 + (start + k) % 250;
            if (!used.contains("10.77." + x + ".")) {
                return x;
            }
        }
        throw new IOException("every subnet 10.77.1-250.0/24 is in use on this machine");
    }

    private static void deleteNamespace(String name, List<String> left) {
        try {
            run("ip", "netns", "del", name);
        } catch (IOException e) {
            if (!e.getMessage().contains("No such file")) {
                left.add("namespace " + name + " (" + e.getMessage() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            left.add("namespace " + name + " (interrupted)");
        }
    }

    private static void deleteLink(String name, List<String> left) {
        try {
            run("ip", "link", "del", name);
        } catch (IOException e) {
            if (!e.getMessage().contains("Cannot find device")) {
                left.add("link " + name + " (" + e.getMessage() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            left.add("link " + name + " (interrupted)");
        }
    }

    /** Runs a command, returns its output; a non-zero exit is an IOException naming the command and its output. */
    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish within 30 s");
        }
        String text = new String(out, StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + text);
        }
        return text;
    }
}
