package io.wheelraft.client;

import io.wheelraft.client.proto.ClientReplies;
import io.wheelraft.client.proto.ClientReply;
import io.wheelraft.rpc.RaftChannels;
import io.wheelraft.rpc.RpcOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the {@link RaftClient}s of many groups in one process share: one connection (a channel and
 * one stream) per server, one timer thread and one sweep over every call in flight.
 *
 * <p>An application that talks to many groups builds one transport and gives it to each group's
 * client ({@link RaftClient.Builder#transport}). Calls of different groups to the same server then
 * leave in the same stream messages, a server counts as silent only when nothing at all has come
 * back from it (a busy server answering other groups' calls is not), and the process keeps one
 * timer however many groups it addresses. A client built without a transport gets a private one,
 * closed with it.
 *
 * <p>Thread-safe. {@link #close()} ends the calls of every client still using it and closes the
 * channels; close the clients first when they should end their calls themselves.
 */
public final class RaftClientTransport implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaftClientTransport.class);
    /** How often deadlines and silent servers are checked. */
    static final long SWEEP_MS = 5;
    /** How long a server whose stream just broke is avoided when picking where a call goes. */
    private static final long AVOID_AFTER_BREAK_MS = 100;

    private final RpcOptions rpcOptions;
    private final Map<String, ServerConnection> connections = new ConcurrentHashMap<>();
    /** Every call attempt in flight, of every client, by its call id (unique in this transport). */
    private final Map<Long, PendingCall> inFlight = new ConcurrentHashMap<>();
    private final AtomicLong callIds = new AtomicLong();
    private final Set<RaftClient> clients = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;
    private volatile boolean closed;

    private RaftClientTransport(RpcOptions rpcOptions, String timerName) {
        this.rpcOptions = Objects.requireNonNull(rpcOptions, "rpcOptions");
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, timerName);
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
    }

    /** A transport with the default channel settings. */
    public static RaftClientTransport create() {
        return create(RpcOptions.defaults());
    }

    /** A transport whose channels use {@code rpcOptions} (TLS, message size, keep-alive: those of the servers' transport). */
    public static RaftClientTransport create(RpcOptions rpcOptions) {
        return new RaftClientTransport(rpcOptions, "raft-client-timer");
    }

    /** The private transport of a client built without one. */
    static RaftClientTransport privateFor(String groupId, RpcOptions rpcOptions) {
        return new RaftClientTransport(rpcOptions, "raft-client-timer-" + groupId);
    }

    /** Servers this transport has a connection to (one each, whatever the number of groups). */
    public int connectionCount() {
        return connections.size();
    }

    boolean isClosed() {
        return closed;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    void attach(RaftClient client) {
        if (closed) {
            throw new IllegalStateException("the RaftClientTransport is closed");
        }
        clients.add(client);
    }

    void detach(RaftClient client) {
        clients.remove(client);
    }

    ServerConnection connection(String endpoint) {
        return connections.computeIfAbsent(endpoint, e -> new ServerConnection(e, RaftChannels.open(e, rpcOptions), this));
    }

    // ---- call attempts ----

    /** Gives {@code call}'s next attempt a fresh id (a late answer to the previous one is then ignored) and tracks it. */
    long track(PendingCall call) {
        inFlight.remove(call.callId);
        long id = callIds.incrementAndGet();
        call.callId = id;
        inFlight.put(id, call);
        return id;
    }

    /** Stops tracking {@code call}'s current attempt; false if it was not tracked any more (someone else took it). */
    boolean untrack(PendingCall call) {
        return inFlight.remove(call.callId, call);
    }

    /** The calls of {@code owner} whose current attempt went to {@code target}, taken out of tracking. */
    List<PendingCall> takeCallsOn(RaftClient owner, ServerConnection target) {
        List<PendingCall> taken = new ArrayList<>();
        for (PendingCall call : inFlight.values()) {
            if (call.owner == owner && call.target == target && inFlight.remove(call.callId, call)) {
                taken.add(call);
            }
        }
        return taken;
    }

    boolean hasCallsOn(RaftClient owner, ServerConnection target) {
        for (PendingCall call : inFlight.values()) {
            if (call.owner == owner && call.target == target) {
                return true;
            }
        }
        return false;
    }

    // ---- from the connections ----

    void onReplies(ServerConnection from, ClientReplies replies) {
        for (ClientReply r : replies.getRepliesList()) {
            PendingCall call = inFlight.remove(r.getCallId());
            if (call == null || call.done()) {
                continue; // an abandoned attempt
            }
            call.owner.onReply(from, call, r);
        }
    }

    /** A stream broke: its calls may have reached the server; queued ones never left. All go elsewhere. */
    void onStreamBroken(ServerConnection conn, Object stream, String why) {
        conn.avoidUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AVOID_AFTER_BREAK_MS);
        for (RaftClient c : clients) {
            c.forgetLeader(conn.endpoint);
        }
        if (!closed) {
            LOG.debug("stream to {} broke: {}", conn.endpoint, why);
        }
        List<PendingCall> moved = new ArrayList<>(conn.takeQueued());
        for (PendingCall call : inFlight.values()) {
            if (call.target == conn && call.sentOn == stream) {
                moved.add(call);
            }
        }
        for (PendingCall call : moved) {
            if (inFlight.remove(call.callId, call)) {
                call.owner.streamBroke(call, conn.endpoint + ": " + why);
            }
        }
    }

    // ---- time: deadlines and silent servers ----

    /**
     * Ends calls past their deadline, and for each client, asks about a server that has not been
     * heard from since one of its calls went there longer ago than the client's silence. Silence
     * is judged on the connection, which every group shares: while a server answers anything, its
     * slow calls are queued behind others, not lost, and asking around would only add load.
     */
    private void sweep() {
        try {
            long now = System.nanoTime();
            Map<RaftClient, List<ServerConnection>> silent = null;
            for (PendingCall call : inFlight.values()) {
                if (now - call.deadlineNanos >= 0) {
                    if (inFlight.remove(call.callId, call)) {
                        call.owner.timedOut(call);
                    }
                    continue;
                }
                ServerConnection c = call.target;
                // Sent and unanswered, or still queued because the stream never became ready.
                long sent = call.sentNanos != 0 ? call.sentNanos : call.queuedNanos;
                if (c != null && now - sent > call.owner.silenceNanos() && c.lastHeardNanos - sent < 0) {
                    if (silent == null) {
                        silent = new HashMap<>();
                    }
                    List<ServerConnection> of = silent.computeIfAbsent(call.owner, k -> new ArrayList<>(2));
                    if (!of.contains(c)) {
                        of.add(c);
                    }
                }
            }
            if (silent != null) {
                for (Map.Entry<RaftClient, List<ServerConnection>> e : silent.entrySet()) {
                    for (ServerConnection c : e.getValue()) {
                        e.getKey().probeAround(c, now);
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("raft client sweep failed: {}", e.toString());
        }
    }

    /** Ends the calls of every client still attached (not applied, or unknown if an attempt left) and closes the channels. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        for (RaftClient c : new ArrayList<>(clients)) {
            c.transportClosed();
        }
        for (ServerConnection c : connections.values()) {
            c.channel().shutdownNow();
        }
        for (ServerConnection c : connections.values()) {
            try {
                c.channel().awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
