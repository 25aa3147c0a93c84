package io.wheelraft.example;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts a {@link LinkFault} on every link between servers that live in {@link NetworkNamespaces},
 * for as long as it is open. Loss: an nftables rule in each server's namespace (output hook) drops
 * the given percentage of the packets that server sends to another server, at random, so each
 * direction of each link loses that share. Delay: this kernel has no {@code sch_netem}, so an nft
 * nat rule in each server's namespace rewrites its connections to server j to the bridge's relay
 * address ({@link NetworkNamespaces#relayHost()}) and a port of a {@link LinkRelay} in this
 * process that stands for the pair (i, j); the relay, in the root namespace and so not rewritten,
 * connects on to server j and delays every chunk both ways. Clients and the runner reach the
 * servers from {@code .254}, directly and without loss. Counters of both are kept for the report.
 *
 * <p>The rules go with the namespaces; {@link #close()} stops the relay. Not thread-safe: one
 * controller applies, reads and closes it; {@link #totals()} may run while the relay works.
 */
final class LinkFaults implements AutoCloseable {

    /** The nft table this class writes in each server's namespace. */
    static final String TABLE = "wheelraft_links";

    /**
     * What the fault did so far.
     *
     * @param packetsToPeers packets the servers sent to each other (to the relay, when delaying), from nft counters
     * @param dropped        of those, dropped by the loss rule
     * @param relay          the relay's totals, or null without delay
     */
    record Totals(long packetsToPeers, long dropped, LinkRelay.Totals relay) {

        /** One line for the report, e.g. {@code nft dropped 1,204 of 24,110 packets the servers sent each other (5.0%)}. */
        String describe(LinkFault fault) {
            List<String> parts = new ArrayList<>();
            if (fault.lossPercent() != 0) {
                parts.add(String.format(Locale.ROOT, "nft dropped %,d of %,d packets the servers sent each other (%.1f%%)", dropped,
                        packetsToPeers, packetsToPeers == 0 ? 0.0 : 100.0 * dropped / packetsToPeers));
            }
            if (relay != null) {
                parts.add(String.format(Locale.ROOT, "the relay carried %,d connections, %,d chunks, %,d bytes between servers, each held "
                        + "%s ms (min / mean / max)%s", relay.connections(), relay.chunks(), relay.bytes(), holds(relay),
                        relay.failedConnects() == 0 ? "" : String.format(Locale.ROOT, "; %,d connections to a server that did not answer "
                                + "were reset", relay.failedConnects())));
            }
            return String.join("; ", parts);
        }

        private static String holds(LinkRelay.Totals r) {
            return r.chunks() == 0 ? "-" : String.format(Locale.ROOT, "%.1f / %.1f / %.1f", r.minHoldMs(), r.meanHoldMs(), r.maxHoldMs());
        }
    }

    /** A connection rewrite: traffic to {@code host:port} goes to {@code relayHost:relayPort} instead. */
    record Redirect(String host, int port, String relayHost, int relayPort) {
    }

    private static final Pattern COUNTER = Pattern.compile("counter packets (\\d+) bytes \\d+");

    private final NetworkNamespaces network;
    private final LinkFault fault;
    private final int size;
    private final LinkRelay relay;

    private LinkFaults(NetworkNamespaces network, LinkFault fault, int size, LinkRelay relay) {
        this.network = network;
        this.fault = fault;
        this.size = size;
        this.relay = relay;
    }

    /** Null when {@code nft} runs here; otherwise what is missing and what to do, in one line. */
    static String unsupportedReason() {
        return unsupportedReason("nft");
    }

    /** As {@link #unsupportedReason()}, with the nft executable named (tests name one that is missing). */
    static String unsupportedReason(String nft) {
        try {
            Process p = new ProcessBuilder(nft, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return "it needs nftables' `nft`, which did not answer `nft --version`; install nftables";
            }
            return null;
        } catch (IOException e) {
            return "it needs nftables' `nft` to drop and redirect the servers' packets (" + e.getMessage() + "); install nftables";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking for `nft`";
        }
    }

    /**
     * Applies {@code fault} to the links between the servers at {@code endpoints} ({@code host:port},
     * server i at index i - 1 in namespace i). Call before the servers start, so that every
     * connection between them is made through the rules.
     */
    static LinkFaults apply(NetworkNamespaces network, LinkFault fault, List<String> endpoints) throws IOException, InterruptedException {
        LinkRelay relay = fault.delays()
                ? new LinkRelay(InetAddress.getByName(network.relayHost()), LinkRelay.uniformMillis(fault.delayMs() - fault.jitterMs(),
                        fault.delayMs() + fault.jitterMs()))
                : null;
        LinkFaults faults = new LinkFaults(network, fault, endpoints.size(), relay);
        try {
            for (int i = 1; i <= endpoints.size(); i++) {
                List<Redirect> redirects = new ArrayList<>();
                List<String> peers = new ArrayList<>();
                for (int j = 1; j <= endpoints.size(); j++) {
                    if (j == i) {
                        continue;
                    }
                    InetSocketAddress peer = address(endpoints.get(j - 1));
                    peers.add(peer.getHostString());
                    if (relay != null) {
                        int port = relay.forward(peer, "n" + i + "-n" + j);
                        redirects.add(new Redirect(peer.getHostString(), peer.getPort(), network.relayHost(), port));
                    }
                }
                if (relay != null) {
                    peers.add(network.relayHost());
                }
                Path file = Files.createTempFile("wheelraft-links-n" + i, ".nft");
                try {
                    Files.writeString(file, script(fault.lossPercent(), redirects, peers), StandardCharsets.UTF_8);
                    network.runIn(i, "nft", "-f", file.toString());
                } finally {
                    Files.deleteIfExists(file);
                }
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            faults.close();
            throw e;
        }
        return faults;
    }

    /**
     * The nft script for one server's namespace: the rewrites of its connections to the other
     * servers (nat, output hook), and a counter of the packets it sends to {@code peers} followed by
     * a rule dropping {@code lossPercent} of them (filter, output hook, after the rewrite).
     */
    static String script(int lossPercent, List<Redirect> redirects, List<String> peers) {
        StringBuilder sb = new StringBuilder("table ip " + TABLE + " {\n");
        if (!redirects.isEmpty()) {
            sb.append("  chain relay {\n    type nat hook output priority -100; policy accept;\n");
            for (Redirect r : redirects) {
                sb.append("    ip daddr ").append(r.host()).append(" tcp dport ").append(r.port()).append(" counter dnat to ")
                        .append(r.relayHost()).append(':').append(r.relayPort()).append('\n');
            }
            sb.append("  }\n");
        }
        String set = "{ " + String.join(", ", peers) + " }";
        sb.append("  chain loss {\n    type filter hook output priority 0; policy accept;\n");
        sb.append("    ip daddr ").append(set).append(" counter\n");
        if (lossPercent > 0) {
            sb.append("    ip daddr ").append(set).append(" numgen random mod 100 < ").append(lossPercent).append(" counter drop\n");
        }
        sb.append("  }\n}\n");
        return sb.toString();
    }

    /** The counters of one namespace's loss chain (as {@code nft list chain} prints it): {packets to peers, dropped}. */
    static long[] lossCounters(String chainListing) {
        long sent = 0;
        long dropped = 0;
        for (String line : chainListing.split("\n")) {
            Matcher m = COUNTER.matcher(line);
            if (m.find()) {
                if (line.contains("drop")) {
                    dropped += Long.parseLong(m.group(1));
                } else {
                    sent += Long.parseLong(m.group(1));
                }
            }
        }
        return new long[] {sent, dropped};
    }

    /** What the fault did so far: nft's counters in every namespace, the relay's totals. */
    Totals totals() throws IOException, InterruptedException {
        long sent = 0;
        long dropped = 0;
        for (int i = 1; i <= size; i++) {
            long[] c = lossCounters(network.runIn(i, "nft", "list", "chain", "ip", TABLE, "loss"));
            sent += c[0];
            dropped += c[1];
        }
        return new Totals(sent, dropped, relay == null ? null : relay.totals());
    }

    LinkFault fault() {
        return fault;
    }

    private static InetSocketAddress address(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        return new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
    }

    @Override
    public void close() {
        if (relay != null) {
            relay.close();
        }
    }
}
