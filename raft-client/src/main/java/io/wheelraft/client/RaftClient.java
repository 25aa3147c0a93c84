package io.wheelraft.client;

import com.google.protobuf.ByteString;
import io.wheelraft.client.proto.ClientCall;
import io.wheelraft.client.proto.ClientReply;
import io.wheelraft.client.proto.Command;
import io.wheelraft.client.proto.LeaderReply;
import io.wheelraft.client.proto.Query;
import io.wheelraft.client.proto.ReadConsistency;
import io.wheelraft.core.PeerId;
import io.wheelraft.rpc.RpcOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client of one Raft group served by {@link RaftClientService}: sends commands (applied exactly
 * once) and queries (read per {@link ReadMode}) to the group's members.
 *
 * <p>It finds the leader and remembers it, follows NOT_LEADER redirects, and retries with backoff
 * until the call's deadline. Commands carry this client's id and a sequence number, so a retry is
 * answered from the servers' retry table instead of being applied twice. When the leader falls
 * silent without the connection breaking (a partition), the client asks the other members who
 * leads and moves its calls there as soon as one names a new leader. A call that does not succeed
 * ends with a {@link NotAppliedException} (certainly not applied; {@link OverloadedException}
 * when the servers were too busy) or an {@link OutcomeUnknownException}.
 *
 * <p>Witnesses (members that vote but hold no data) may be among the endpoints: a witness answers
 * every call {@code OUTCOME_WITNESS}, and says it is one when asked who leads, so the client
 * learns it at the first contact and from then on sends it no command and no read (follower reads
 * included) and never takes it for the leader, whatever a hint says.
 *
 * <p>Clients of many groups in one process should share one {@link RaftClientTransport} (see
 * {@link Builder#transport}): one connection and one timer for all of them. Without one, a client
 * makes its own.
 *
 * <p>Concurrent calls from any number of threads share one stream per server; what is queued
 * leaves in one message (calls started from the callbacks of one message of answers leave
 * together once those callbacks have run), and gRPC flow control applies end to end. At most
 * {@code maxOutstanding} calls are in flight: a call beyond it waits (within its deadline) for one
 * to end, so a slow cluster slows its callers.
 *
 * <p>Thread-safe. Futures complete on gRPC's I/O threads or the client's timer thread: do not
 * block in their callbacks (use the {@code ...Async} variants of {@link CompletableFuture} with
 * an executor for slow work). {@link #close()} ends the outstanding calls.
 */
public final class RaftClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaftClient.class);
    /**
     * While calls wait for a leader (an election is under way), how often the client expires the
     * waiting calls and asks the members it has no question out with who leads ({@link LeaderQuestions}:
     * a member holds the question until it hears of a leader, so this sends a call per member and
     * election, not per tick; only a member that answers at once is asked again at this pace).
     */
    private static final long LEADER_POLL_MS = 15;

    /** Settings of a {@link RaftClient}; {@link #build()} validates them. Not thread-safe. */
    public static final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private String groupId;
        private String clientId = UUID.randomUUID().toString();
        private Duration timeout = Duration.ofSeconds(10);
        private Duration silence = Duration.ofMillis(300);
        private int maxOutstanding = 10_000;
        private boolean followerReads;
        private RpcOptions rpcOptions;
        private RaftClientTransport transport;

        private Builder() {
        }

        /** The group's members, {@code host:port} each (the port of their gRPC server). */
        public Builder endpoints(List<String> endpoints) {
            this.endpoints.clear();
            this.endpoints.addAll(endpoints);
            return this;
        }

        public Builder groupId(String groupId) {
            this.groupId = groupId;
            return this;
        }

        /** Identifies this client in the servers' retry tables; unique per client instance (default: a random UUID). */
        public Builder clientId(String clientId) {
            this.clientId = clientId;
            return this;
        }

        /** Default deadline of a call, retries included (default 10 s). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** How long a server may stay silent about a call before the client asks the others who leads (default 300 ms). */
        public Builder silenceBeforeProbe(Duration silence) {
            this.silence = silence;
            return this;
        }

        /**
         * Calls in flight at most; more wait for a slot (default 10,000). The wait happens in the
         * calling thread, so a load that starts its next call from a completion callback (a gRPC
         * thread) must stay below this limit.
         */
        public Builder maxOutstanding(int maxOutstanding) {
            this.maxOutstanding = maxOutstanding;
            return this;
        }

        /** Spread LINEARIZABLE reads over all members (each confirms with the leader) instead of the leader alone. */
        public Builder followerReads(boolean followerReads) {
            this.followerReads = followerReads;
            return this;
        }

        /** Channel settings: TLS, message size, keep-alive (those of the servers' transport). Not with {@link #transport}. */
        public Builder rpcOptions(RpcOptions rpcOptions) {
            this.rpcOptions = Objects.requireNonNull(rpcOptions, "rpcOptions");
            return this;
        }

        /**
         * Share {@code transport} (its connections, timer and channel settings) with the clients of
         * other groups; closing this client leaves it open. Default: a private one.
         */
        public Builder transport(RaftClientTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** @throws IllegalArgumentException naming the setting that is missing or wrong */
        public RaftClient build() {
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("a RaftClient needs at least one endpoint (host:port)");
            }
            for (String e : endpoints) {
                PeerId.parse(e); // names a malformed endpoint
            }
            if (groupId == null || groupId.isEmpty()) {
                throw new IllegalArgumentException("a RaftClient needs the group id it talks to");
            }
            if (clientId == null || clientId.isEmpty()) {
                throw new IllegalArgumentException("client id must not be empty");
            }
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, was " + timeout);
            }
            if (silence == null || silence.isNegative() || silence.isZero()) {
                throw new IllegalArgumentException("silenceBeforeProbe must be positive, was " + silence);
            }
            if (maxOutstanding <= 0) {
                throw new IllegalArgumentException("maxOutstanding must be positive, was " + maxOutstanding);
            }
            if (transport != null && rpcOptions != null) {
                throw new IllegalArgumentException("set rpcOptions on the shared RaftClientTransport, not on a client that uses one");
            }
            if (transport != null && transport.isClosed()) {
                throw new IllegalArgumentException("the shared RaftClientTransport is closed");
            }
            return new RaftClient(this);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    private final List<String> endpoints;
    private final String groupId;
    private final String clientId;
    private final long timeoutNanos;
    private final long silenceNanos;
    private final boolean followerReads;
    private final RaftClientTransport transport;
    /** Whether {@link #transport} is this client's own (closed with it). */
    private final boolean ownsTransport;
    private final int maxOutstanding;
    private final Semaphore slots;
    /** Every call not yet ended, including those waiting out a backoff (for close). */
    private final java.util.Set<PendingCall> outstanding = ConcurrentHashMap.newKeySet();
    /** Endpoints known to be witnesses: never sent calls, never followed as leader. */
    private final java.util.Set<String> witnesses = ConcurrentHashMap.newKeySet();
    /** When this client last asked around about a silent server, by endpoint (System.nanoTime). */
    private final Map<String, Long> lastProbeNanos = new ConcurrentHashMap<>();
    private final ConcurrentSkipListMap<Long, PendingCall> unansweredCommands = new ConcurrentSkipListMap<>();
    private final Object sequenceLock = new Object();
    private final AtomicLong lastIndex = new AtomicLong();
    private final AtomicInteger roundRobin = new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 16));
    private final ScheduledExecutorService timer;
    private long lastSequence;
    private volatile String leader;
    private volatile boolean closed;
    /** Calls that met no leader, waiting for one to be named (see {@link #awaitLeader}). */
    private final java.util.Queue<PendingCall> awaitingLeader = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicBoolean findingLeader = new java.util.concurrent.atomic.AtomicBoolean();
    /** Who-leads questions while calls wait for a leader, and while a leader is silent. */
    private final LeaderQuestions findQuestions;
    private final LeaderQuestions probeQuestions;

    private RaftClient(Builder b) {
        this.endpoints = List.copyOf(b.endpoints);
        this.groupId = b.groupId;
        this.clientId = b.clientId;
        this.timeoutNanos = b.timeout.toNanos();
        this.silenceNanos = b.silence.toNanos();
        this.followerReads = b.followerReads;
        this.ownsTransport = b.transport == null;
        this.transport = ownsTransport
                ? RaftClientTransport.privateFor(groupId, b.rpcOptions == null ? RpcOptions.defaults() : b.rpcOptions)
                : b.transport;
        this.maxOutstanding = b.maxOutstanding;
        this.slots = new Semaphore(b.maxOutstanding);
        this.timer = transport.timer();
        this.findQuestions = new LeaderQuestions(groupId, e -> connection(e).channel());
        this.probeQuestions = new LeaderQuestions(groupId, e -> connection(e).channel());
        transport.attach(this);
    }

    public String clientId() {
        return clientId;
    }

    public String groupId() {
        return groupId;
    }

    /** The member this client believes leads, or null. */
    public String leader() {
        return leader;
    }

    /** The endpoints this client has learnt are witnesses (it sends them nothing). */
    public java.util.Set<String> knownWitnesses() {
        return java.util.Set.copyOf(witnesses);
    }

    /** The highest log index this client has seen in an answer (read-your-writes for STALE reads). */
    public long lastIndex() {
        return lastIndex.get();
    }

    // ---- the asynchronous API ----

    /** Replicates {@code command} exactly once; completes with the state machine's answer. */
    public CompletableFuture<byte[]> submitAsync(byte[] command) {
        return submitAsync(command, Duration.ofNanos(timeoutNanos)).thenApply(Reply::result);
    }

    /** Replicates {@code command} exactly once, with its own deadline; the reply says which index and member. */
    public CompletableFuture<Reply> submitAsync(byte[] command, Duration timeout) {
        Objects.requireNonNull(command, "command");
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!acquireSlot(deadline)) {
            return CompletableFuture.failedFuture(new OverloadedException(
                    "more than " + slotsTotal() + " calls outstanding until the deadline; nothing was sent"));
        }
        PendingCall call;
        synchronized (sequenceLock) {
            // Registered under the same lock as its number, so first_unacked never skips a sequence.
            call = new PendingCall(this, true, ++lastSequence, ByteString.copyFrom(command), null, 0, deadline);
            unansweredCommands.put(call.sequence, call);
        }
        outstanding.add(call);
        dispatch(call);
        return call.future;
    }

    /** Reads with {@code mode}; STALE reads see at least {@link #lastIndex()}. */
    public CompletableFuture<byte[]> queryAsync(byte[] query, ReadMode mode) {
        return queryAsync(query, mode, mode == ReadMode.STALE ? lastIndex.get() : 0, Duration.ofNanos(timeoutNanos)).thenApply(Reply::result);
    }

    /** A read; {@code minIndex} applies to STALE reads (the member must have applied it). */
    public CompletableFuture<Reply> queryAsync(byte[] query, ReadMode mode, long minIndex, Duration timeout) {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(mode, "mode");
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!acquireSlot(deadline)) {
            return CompletableFuture.failedFuture(new OverloadedException(
                    "more than " + slotsTotal() + " calls outstanding until the deadline; nothing was sent"));
        }
        PendingCall call = new PendingCall(this, false, 0, ByteString.copyFrom(query), mode, minIndex, deadline);
        outstanding.add(call);
        dispatch(call);
        return call.future;
    }

    // ---- the blocking API ----

    /**
     * Replicates {@code command} exactly once and waits for the answer.
     *
     * @throws NotAppliedException     certainly not applied ({@link OverloadedException}: the servers were too busy)
     * @throws OutcomeUnknownException may or may not have been applied
     */
    public byte[] submit(byte[] command) {
        return await(submitAsync(command));
    }

    /** {@link #submit(byte[])} with its own deadline; the reply says which index and member. */
    public Reply submit(byte[] command, Duration timeout) {
        return await(submitAsync(command, timeout));
    }

    /** Reads with {@code mode} and waits; throws {@link NotAppliedException} when no member could answer in time. */
    public byte[] query(byte[] query, ReadMode mode) {
        return await(queryAsync(query, mode));
    }

    /** {@link #query(byte[], ReadMode)} with a STALE read's minimum index and its own deadline. */
    public Reply query(byte[] query, ReadMode mode, long minIndex, Duration timeout) {
        return await(queryAsync(query, mode, minIndex, timeout));
    }

    private static <T> T await(CompletableFuture<T> f) {
        // Called from an answer's callback (which it should not be), its own call must not wait for the callback to end.
        SendGathering.CALLS.flushGathered();
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RaftClientException r) {
                throw r;
            }
            throw e;
        }
    }

    private int slotsTotal() {
        return maxOutstanding;
    }

    /** Tells the client who leads (tests; a hint an application learnt elsewhere). */
    void leaderIs(String endpoint) {
        leader = endpoint;
    }

    private boolean acquireSlot(long deadline) {
        if (closed) {
            throw new IllegalStateException("the RaftClient of group " + groupId + " is closed");
        }
        if (slots.tryAcquire()) {
            return true;
        }
        try {
            return slots.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ---- sending ----

    private void dispatch(PendingCall call) {
        if (call.done()) {
            return;
        }
        if (closed) {
            fail(call, "the client was closed");
            return;
        }
        long now = System.nanoTime();
        if (now - call.deadlineNanos >= 0) {
            timedOut(call);
            return;
        }
        ServerConnection target = connection(pickTarget(call, now));
        call.target = target;
        call.sentOn = null;
        call.sentNanos = 0;
        call.attemptSent = false;
        call.queuedNanos = now;
        target.send(call, transport.track(call));
    }

    private String pickTarget(PendingCall call, long now) {
        boolean anyMember = !call.command && (call.mode == ReadMode.STALE || (call.mode == ReadMode.LINEARIZABLE && followerReads));
        String l = leader;
        if (!anyMember && l != null && !connection(l).avoided(now) && !witnesses.contains(l)) {
            return l;
        }
        for (int i = 0; i < endpoints.size(); i++) {
            String e = endpoints.get(Math.floorMod(roundRobin.getAndIncrement(), endpoints.size()));
            if (!connection(e).avoided(now) && !witnesses.contains(e)) {
                return e;
            }
        }
        for (int i = 0; i < endpoints.size(); i++) {
            String e = endpoints.get(Math.floorMod(roundRobin.getAndIncrement(), endpoints.size()));
            if (!witnesses.contains(e)) {
                return e;
            }
        }
        // Only witnesses are listed: one of them names the leader, which the call then follows.
        return endpoints.get(Math.floorMod(roundRobin.getAndIncrement(), endpoints.size()));
    }

    private ServerConnection connection(String endpoint) {
        return transport.connection(endpoint);
    }

    long silenceNanos() {
        return silenceNanos;
    }

    /** The wire form of the current attempt (built when it leaves, so first_unacked is fresh). */
    ClientCall toProto(PendingCall call, long callId) {
        ClientCall.Builder b = ClientCall.newBuilder().setCallId(callId).setGroupId(groupId);
        if (call.command) {
            long firstUnacked = call.sequence;
            Map.Entry<Long, PendingCall> first = unansweredCommands.firstEntry();
            if (first != null && first.getKey() < firstUnacked) {
                firstUnacked = first.getKey();
            }
            b.setCommand(Command.newBuilder().setClientId(clientId).setSequence(call.sequence).setFirstUnacked(firstUnacked)
                    .setPayload(call.payload));
        } else {
            ReadConsistency c = switch (call.mode) {
                case LINEARIZABLE -> ReadConsistency.READ_CONSISTENCY_LINEARIZABLE;
                case LEASE -> ReadConsistency.READ_CONSISTENCY_LEASE;
                case STALE -> ReadConsistency.READ_CONSISTENCY_STALE;
            };
            b.setQuery(Query.newBuilder().setConsistency(c).setMinIndex(call.minIndex).setPayload(call.payload));
        }
        return b.build();
    }

    // ---- answers ----

    /** The answer to {@code call}'s current attempt (the transport has stopped tracking it). */
    void onReply(ServerConnection from, PendingCall call, ClientReply r) {
        call.attemptSent = false; // answered: this attempt's fate is known (UNKNOWN says so itself)
        call.reachedAny = true;
        switch (r.getOutcome()) {
            case OUTCOME_OK -> {
                if (call.command || call.mode != ReadMode.STALE && !followerReads) {
                    leader = from.endpoint;
                }
                lastIndex.accumulateAndGet(r.getIndex(), Math::max);
                succeed(call, new Reply(r.getResult().toByteArray(), r.getIndex(), from.endpoint));
            }
            case OUTCOME_WITNESS -> {
                call.lastReason = from.endpoint + ": " + r.getMessage();
                if (witnesses.add(from.endpoint)) {
                    LOG.debug("{} is a witness: no more calls go to it", from.endpoint);
                }
                forgetLeader(from.endpoint);
                boolean anyMember = !call.command && (call.mode == ReadMode.STALE || (call.mode == ReadMode.LINEARIZABLE && followerReads));
                String hint = r.getLeaderHint();
                if (anyMember && call.redirects++ < 2 * endpoints.size() + 2) {
                    dispatch(call); // another member serves it; the witness is skipped from now on
                } else if (!hint.isEmpty() && !witnesses.contains(hint) && call.redirects++ < 2 * endpoints.size() + 2) {
                    leader = hint;
                    dispatch(call);
                } else {
                    awaitLeader(call);
                }
            }
            case OUTCOME_NOT_LEADER -> {
                call.lastReason = from.endpoint + ": " + r.getMessage();
                String hint = r.getLeaderHint();
                if (!hint.isEmpty() && !hint.equals(from.endpoint) && !witnesses.contains(hint) && call.redirects++ < 2 * endpoints.size() + 2) {
                    leader = hint;
                    dispatch(call); // follow the redirect at once
                } else {
                    forgetLeader(from.endpoint);
                    awaitLeader(call);
                }
            }
            case OUTCOME_BUSY -> {
                call.sawBusy = true;
                call.lastReason = from.endpoint + ": " + r.getMessage();
                retryLater(call);
            }
            case OUTCOME_BEHIND -> {
                call.lastReason = from.endpoint + ": " + r.getMessage();
                retryLater(call);
            }
            case OUTCOME_REJECTED -> {
                call.lastReason = from.endpoint + " rejected the call: " + r.getMessage();
                if (call.command && call.mayHaveApplied) {
                    finish(call, null, new OutcomeUnknownException(call.lastReason + " (an earlier attempt may have been applied)"));
                } else {
                    fail(call, call.lastReason);
                }
            }
            default -> {
                call.mayHaveApplied |= call.command;
                call.lastReason = from.endpoint + " answered unknown: " + r.getMessage();
                forgetLeader(from.endpoint);
                retryLater(call);
            }
        }
    }

    /** The stream {@code call}'s current attempt went on broke (the transport has stopped tracking it): it goes elsewhere. */
    void streamBroke(PendingCall call, String why) {
        abandonAttempt(call);
        call.lastReason = why;
        retryLater(call);
    }

    /** The current attempt is given up without an answer: if it had left, it may still be applied. */
    private static void abandonAttempt(PendingCall call) {
        if (call.command && call.attemptSent) {
            call.mayHaveApplied = true;
        }
        call.attemptSent = false;
    }

    void forgetLeader(String endpoint) {
        if (endpoint.equals(leader)) {
            leader = null;
        }
    }

    private void retryLater(PendingCall call) {
        int failures = ++call.failures;
        long backoffMs = Math.min(100, 2L << Math.min(failures, 6));
        long delayNanos = TimeUnit.MILLISECONDS.toNanos(backoffMs / 2 + ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1));
        long left = call.deadlineNanos - System.nanoTime();
        if (left <= 0) {
            timedOut(call);
            return;
        }
        if (closed) {
            fail(call, "the client was closed");
            return;
        }
        try {
            timer.schedule(() -> dispatch(call), Math.min(delayNanos, left), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            fail(call, "the client was closed");
        }
    }

    // ---- finding a new leader ----

    /**
     * No member named a leader for {@code call} (an election is under way): park it and ask every
     * member who leads ({@link LeaderQuestions}: each answers when it hears of a leader we can use)
     * until one names a leader it can reach, then send every parked call there at once. Rather than
     * each call retrying with its own backoff, which found a leader elected in 60 ms only 50-100 ms later.
     */
    private void awaitLeader(PendingCall call) {
        call.failures++;
        awaitingLeader.add(call);
        if (findingLeader.compareAndSet(false, true)) {
            try {
                timer.execute(this::findLeader);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                findingLeader.set(false);
                fail(call, "the client was closed");
            }
        }
    }

    /** One poll of the members (timer thread); schedules the next while calls still wait. */
    private void findLeader() {
        long now = System.nanoTime();
        for (java.util.Iterator<PendingCall> it = awaitingLeader.iterator(); it.hasNext(); ) {
            PendingCall call = it.next();
            if (closed || call.done() || now - call.deadlineNanos >= 0) {
                it.remove();
                if (closed) {
                    fail(call, "the client was closed");
                } else if (!call.done()) {
                    timedOut(call);
                }
            }
        }
        if (awaitingLeader.isEmpty() || closed) {
            findingLeader.set(false);
            if (!awaitingLeader.isEmpty() && !closed && findingLeader.compareAndSet(false, true)) {
                timer.execute(this::findLeader); // a call parked while we were stopping
            }
            return;
        }
        List<String> notUsable = new ArrayList<>(witnesses);
        for (String e : endpoints) {
            if (connection(e).avoided(now)) {
                notUsable.add(e);
            }
        }
        // A member holds its answer until it knows a leader we can use: one question per member per
        // election, not one per tick (see HeldLeaderAnswer). A member that has not noticed the
        // failure yet still names the old leader; one whose stream just broke is skipped until it
        // answers again.
        findQuestions.ask(endpoints, notUsable, whenLeaderNamed(named -> !connection(named).avoided(System.nanoTime()), this::leaderNamed));
        try {
            timer.schedule(this::findLeader, LEADER_POLL_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            findingLeader.set(false); // closed: close() ends the parked calls
        }
    }

    /**
     * What a member said about witnesses when asked who leads: whether it is one itself, and which
     * members its configuration marks as witnesses. A member that says it is not one (a witness
     * removed and added back as a data replica) is used again.
     */
    private void learnWitnesses(String endpoint, LeaderReply reply) {
        if (reply.getWitness()) {
            witnesses.add(endpoint);
        } else {
            witnesses.remove(endpoint);
        }
        witnesses.addAll(reply.getWitnessesList());
    }

    /** A member named {@code named} as leader: every parked call goes there now. */
    private void leaderNamed(String named) {
        leader = named;
        PendingCall call;
        while ((call = awaitingLeader.poll()) != null) {
            call.lastReason = "waited for a leader; " + named + " was named";
            dispatch(call);
        }
    }

    // ---- time: deadlines and silent servers (the transport's sweep calls these) ----

    /**
     * {@code suspect} has not answered for a while without its connection breaking: ask the other
     * members who leads (for as long as its calls stay unanswered; each member answers once it
     * knows a leader other than the suspect, so a new leader is learnt as soon as one is elected)
     * and move the calls waiting on it to a leader named by one of them.
     */
    void probeAround(ServerConnection suspect, long now) {
        Long last = lastProbeNanos.get(suspect.endpoint);
        if (last != null && now - last < TimeUnit.MILLISECONDS.toNanos(LEADER_POLL_MS)) {
            return;
        }
        lastProbeNanos.put(suspect.endpoint, now);
        List<String> others = new ArrayList<>(endpoints);
        others.remove(suspect.endpoint);
        List<String> notUsable = new ArrayList<>(witnesses);
        notUsable.add(suspect.endpoint);
        probeQuestions.ask(others, notUsable, whenLeaderNamed(named -> !named.equals(suspect.endpoint), named -> moveCalls(suspect, named)));
    }

    /**
     * What to do with the members' answers to one round of who-leads questions: learn the
     * witnesses they report, and hand a leader one names to {@code use} (on the timer thread) if
     * it is no witness, {@code usable} accepts it and it comes with a newer term than any handed
     * over before in this round.
     */
    private java.util.function.BiConsumer<String, LeaderReply> whenLeaderNamed(java.util.function.Predicate<String> usable,
                                                                              java.util.function.Consumer<String> use) {
        AtomicLong bestTerm = new AtomicLong(-1);
        return (e, reply) -> {
            learnWitnesses(e, reply);
            String named = reply.getLeader();
            if (!named.isEmpty() && !witnesses.contains(named) && usable.test(named)
                    && bestTerm.getAndAccumulate(reply.getTerm(), Math::max) < reply.getTerm()) {
                timer.execute(() -> use.accept(named));
            }
        };
    }

    private void moveCalls(ServerConnection suspect, String newLeader) {
        if (closed || !transport.hasCallsOn(this, suspect)) {
            return;
        }
        LOG.debug("{} is silent; {} leads now: moving its calls", suspect.endpoint, newLeader);
        leader = newLeader;
        suspect.avoidUntilNanos = System.nanoTime() + silenceNanos;
        List<PendingCall> moved = transport.takeCallsOn(this, suspect);
        for (PendingCall call : moved) {
            abandonAttempt(call);
        }
        // The server is silent to every group (the sweep judges the shared connection): its other
        // calls move too, through the broken stream.
        suspect.abandonStream("silent: another member names " + newLeader + " as leader");
        for (PendingCall call : moved) {
            call.lastReason = suspect.endpoint + " stayed silent; " + newLeader + " leads now";
            dispatch(call);
        }
    }

    // ---- ending calls ----

    /** {@code call}'s deadline passed; the transport's sweep calls this once it stopped tracking the attempt. */
    void timedOut(PendingCall call) {
        abandonAttempt(call);
        long ms = TimeUnit.NANOSECONDS.toMillis(call.deadlineNanos - call.startNanos);
        String last = "; last: " + call.lastReason;
        if (call.command && call.mayHaveApplied) {
            finish(call, null, new OutcomeUnknownException("no confirmed answer within the deadline; the command may or may not have been applied" + last));
        } else if (call.sawBusy) {
            finish(call, null, new OverloadedException("the servers stayed too busy until the deadline; not applied" + last));
        } else if (!call.reachedAny) {
            finish(call, null, new NotAppliedException("cluster unreachable: no member of " + String.join(",", endpoints)
                    + " answered within " + ms + " ms" + last));
        } else {
            finish(call, null, new NotAppliedException("no member could serve the call within its deadline of " + ms + " ms"
                    + (call.command ? "; not applied" : "") + last));
        }
    }

    private void fail(PendingCall call, String why) {
        abandonAttempt(call);
        if (call.command && call.mayHaveApplied) {
            finish(call, null, new OutcomeUnknownException(why + "; an attempt may have been applied"));
        } else {
            finish(call, null, new NotAppliedException(why));
        }
    }

    private void succeed(PendingCall call, Reply result) {
        finish(call, result, null);
    }

    private void finish(PendingCall call, Reply result, RaftClientException error) {
        if (!call.finished.compareAndSet(false, true)) {
            return;
        }
        transport.untrack(call);
        outstanding.remove(call);
        if (call.command) {
            unansweredCommands.remove(call.sequence);
        }
        slots.release();
        if (error == null) {
            call.future.complete(result);
        } else {
            call.future.completeExceptionally(error);
        }
    }

    /**
     * Ends every outstanding call (not applied, or unknown if an attempt left); closes the
     * transport if it is this client's own, else leaves it to the other clients.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        transport.detach(this);
        endOutstanding("the client was closed");
        if (ownsTransport) {
            transport.close();
        }
    }

    /** The shared transport was closed under this client. */
    void transportClosed() {
        closed = true;
        endOutstanding("the client's transport was closed");
    }

    private void endOutstanding(String why) {
        for (PendingCall call : new ArrayList<>(outstanding)) {
            fail(call, why);
        }
    }
}
