package io.wheelraft.example;

import io.wheelraft.core.PeerId;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Checks a server's {@code --self} against its {@code --peers} before anything starts. Raft
 * compares peers by their spelling, so {@code localhost:7001} and {@code 127.0.0.1:7001} are two
 * different nodes to it: a node started with one spelling in a cluster listed with the other
 * would run as an outsider waiting to be added, beside a member that never answers. That is
 * refused as bad usage. A {@code --self} not listed at all keeps its meaning (a new node that
 * waits to be added), but the server says so plainly at start.
 *
 * <p>Stateless; host names are resolved through the given {@link Resolver}.
 */
final class SelfAddress {

    /** How a {@code --self} relates to {@code --peers}. */
    enum Membership { LISTED, NOT_LISTED }

    /** Resolves a host name to its addresses; the default asks the system resolver. */
    interface Resolver {
        List<InetAddress> resolve(String host) throws UnknownHostException;

        Resolver SYSTEM = host -> Arrays.asList(InetAddress.getAllByName(host));
    }

    private SelfAddress() {
    }

    /**
     * @throws CliException (usage, exit 2) when {@code self} is spelled differently from a listed
     *                      member with the same port whose host resolves to a same address
     */
    static Membership check(PeerId self, List<PeerId> peers, Resolver resolver) {
        if (peers.contains(self)) {
            return Membership.LISTED;
        }
        Set<InetAddress> mine = null;
        for (PeerId p : peers) {
            if (p.port() != self.port()) {
                continue;
            }
            if (mine == null) {
                mine = addresses(self.host(), resolver);
            }
            Set<InetAddress> theirs = addresses(p.host(), resolver);
            theirs.retainAll(mine);
            if (!theirs.isEmpty() || p.host().equalsIgnoreCase(self.host())) {
                throw CliException.usage("--self " + self + " and " + p + " in --peers are the same node spelled two ways ("
                        + describe(theirs) + "); Raft tells members apart by spelling, so write it the same in both (e.g. --self " + p + ")");
            }
        }
        return Membership.NOT_LISTED;
    }

    /** The start-up line of a node whose {@code --self} is not in {@code --peers}. */
    static String notListedLine(PeerId self, List<PeerId> peers) {
        return notListedLine(self, peers, false);
    }

    /** The same for a node that runs as a witness ({@code --witnesses} names its {@code --self}), added with add-witness. */
    static String notListedLine(PeerId self, List<PeerId> peers, boolean witness) {
        return "--self " + self + " is not in --peers " + peers.stream().map(PeerId::toString).collect(Collectors.joining(","))
                + ": this node is not a member. Unless its data directory already holds a configuration naming it, it starts"
                + " empty" + (witness ? " as a witness" : "") + " and waits to be added (admin --peers LIST "
                + (witness ? "add-witness " : "add-peer ") + self + "); if it should be one of the listed"
                + " members, stop it and correct --self or --peers";
    }

    private static Set<InetAddress> addresses(String host, Resolver resolver) {
        try {
            return new java.util.HashSet<>(resolver.resolve(host));
        } catch (UnknownHostException | SecurityException e) {
            return new java.util.HashSet<>(); // cannot tell; the spelling alone then decides
        }
    }

    private static String describe(Set<InetAddress> common) {
        return common.isEmpty() ? "same host name" : "both resolve to " + common.stream().map(InetAddress::getHostAddress).sorted()
                .collect(Collectors.joining(", "));
    }
}
