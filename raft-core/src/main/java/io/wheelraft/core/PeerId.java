package io.wheelraft.core;

import java.util.Objects;

/**
 * A Raft peer: the address of the process hosting it ({@code host:port}) and an index that
 * tells apart several peers of one group in the same process (0 by default). Written and
 * parsed as {@code host:port} or {@code host:port:index}. Immutable.
 */
public final class PeerId implements Comparable<PeerId> {

    private final String host;
    private final int port;
    private final int index;
    /** The text form, kept because every outgoing message carries it. */
    private final String text;

    public PeerId(String host, int port) {
        this(host, port, 0);
    }

    public PeerId(String host, int port, int index) {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("peer host must not be empty");
        }
        if (host.contains(":") || host.contains(",") || host.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("peer host '" + host + "' must not contain ':', ',' or spaces");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("peer port " + port + " is outside 1..65535 (in '" + host + ":" + port + "')");
        }
        if (index < 0) {
            throw new IllegalArgumentException("peer index " + index + " must not be negative");
        }
        this.host = host;
        this.port = port;
        this.index = index;
        this.text = index == 0 ? host + ":" + port : host + ":" + port + ":" + index;
    }

    /**
     * Parses {@code host:port} or {@code host:port:index}.
     *
     * @throws IllegalArgumentException naming the text and what is wrong with it
     */
    public static PeerId parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("peer address is missing (null)");
        }
        PeerId known = PARSED.get(text);
        if (known != null) {
            return known;
        }
        PeerId parsed = parseNew(text);
        if (PARSED.size() < MAX_PARSED) {
            PARSED.putIfAbsent(text, parsed);
        }
        return parsed;
    }

    /**
     * Peers parsed so far, by their text: every message names its sender, leader and addressee, and
     * a process hosting thousands of groups would otherwise keep thousands of equal copies (with
     * their strings) in terms, votes and configurations. Bounded, so text from a misbehaving
     * sender cannot grow it without end; past the bound, parsing makes a new instance as before.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, PeerId> PARSED = new java.util.concurrent.ConcurrentHashMap<>();
    private static final int MAX_PARSED = 4096;

    private static PeerId parseNew(String text) {
        String s = text.trim();
        String[] parts = s.split(":", -1);
        if (parts.length < 2 || parts.length > 3) {
            throw new IllegalArgumentException("peer address '" + text + "' is not of the form HOST:PORT or HOST:PORT:INDEX");
        }
        int port = parseNumber(parts[1], "port", text);
        int index = parts.length == 3 ? parseNumber(parts[2], "index", text) : 0;
        try {
            return new PeerId(parts[0], port, index);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("peer address '" + text + "' is invalid: " + e.getMessage(), e);
        }
    }

    private static int parseNumber(String value, String what, String text) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("peer address '" + text + "' has a " + what + " '" + value + "' that is not a number", e);
        }
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public int index() {
        return index;
    }

    /** {@code host:port}: the process endpoint, shared by every peer hosted there. */
    public String endpoint() {
        return host + ":" + port;
    }

    /**
     * Whether {@link #endpoint()} equals {@code endpoint}, without building it: a process hosting
     * 100,000 groups asks this of every member of every group at each liveness report.
     */
    public boolean hasEndpoint(String endpoint) {
        int h = host.length();
        int length = endpoint.length();
        if (length < h + 2 || length > h + 6 || endpoint.charAt(h) != ':' || !endpoint.startsWith(host)) {
            return false;
        }
        if (endpoint.charAt(h + 1) == '0' && length > h + 2) {
            return false; // a leading zero: endpoint() never writes one
        }
        int p = 0;
        for (int i = h + 1; i < length; i++) {
            char c = endpoint.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
            p = p * 10 + (c - '0');
        }
        return p == port;
    }

    @Override
    public int compareTo(PeerId o) {
        int c = host.compareTo(o.host);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(port, o.port);
        return c != 0 ? c : Integer.compare(index, o.index);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PeerId p && port == p.port && index == p.index && host.equals(p.host);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, port, index);
    }

    @Override
    public String toString() {
        return text;
    }
}
