package io.wheelraft.example;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.rpc.proto.counter.ClientSession;
import io.wheelraft.rpc.proto.counter.CounterCommand;
import io.wheelraft.rpc.proto.counter.CounterSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * The replicated counter: a value and, for exactly-once increments, the last sequence number
 * applied for each client id together with the value it produced. Both go into snapshots.
 *
 * <p>An increment whose sequence is at most the client's last applied one is a retry (or a stale
 * duplicate) and is not applied again: a retry of the last one gets the value it produced the
 * first time, an older one is reported {@link IncrClosure.Result#STALE}.
 *
 * <p>Threading: every callback runs on the node's apply thread; {@link #value()} and
 * {@link #appliedIndex()} may be read from any thread (volatile). Reads that must be
 * linearizable go through {@code Node.readIndex}, whose closure also runs on the apply thread.
 */
public final class CounterStateMachine extends StateMachineAdapter {

    /** The one file of a counter snapshot. */
    public static final String SNAPSHOT_FILE = "counter.snapshot";
    static final int FORMAT_VERSION = 1;

    private static final Logger LOG = LoggerFactory.getLogger(CounterStateMachine.class);

    private record Session(long lastSequence, long lastValue) {
    }

    private final Map<String, Session> sessions = new HashMap<>();
    private volatile long value;
    private volatile long appliedIndex;
    private volatile long leaderTerm = -1;
    private volatile java.util.function.Supplier<io.wheelraft.core.Role> roleSource;
    private volatile Status lastError;

    /** The current value (as applied on this node; not a linearizable read by itself). */
    public long value() {
        return value;
    }

    /** The index of the last entry this state machine applied. */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** The term in which this node leads, or -1 when it does not. */
    public long leaderTerm() {
        return leaderTerm;
    }

    /** Number of client sessions remembered for exactly-once (for metrics and tests). */
    public synchronized int sessionCount() {
        return sessions.size();
    }

    /**
     * Encodes one increment for the log.
     *
     * @throws IllegalArgumentException if the client id is empty or the sequence is not positive
     */
    public static ByteBuffer encode(String clientId, long sequence, long delta) {
        if (clientId == null || clientId.isEmpty()) {
            throw new IllegalArgumentException("client id must not be empty");
        }
        if (sequence <= 0) {
            throw new IllegalArgumentException("sequence must be positive, was " + sequence);
        }
        return ByteBuffer.wrap(CounterCommand.newBuilder().setFormatVersion(FORMAT_VERSION).setClientId(clientId)
                .setSequence(sequence).setDelta(delta).build().toByteArray());
    }

    @Override
    public void onApply(Iterator it) {
        // The answers of this batch leave together (one stream message per client stream).
        AnswerBatch.collect(() -> applyAll(it));
    }

    private void applyAll(Iterator it) {
        while (it.hasNext()) {
            ByteBuffer data = it.next();
            CounterCommand command;
            try {
                command = CounterCommand.parseFrom(data.duplicate());
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                it.setErrorAndRollback(Status.error(RaftError.STATE_MACHINE_ERROR,
                        "entry %d is not a counter command: %s", it.index(), e.getMessage()));
                return;
            }
            if (command.getFormatVersion() != FORMAT_VERSION) {
                it.setErrorAndRollback(Status.error(RaftError.STATE_MACHINE_ERROR,
                        "entry %d has counter command format %d; this build reads only %d",
                        it.index(), command.getFormatVersion(), FORMAT_VERSION));
                return;
            }
            IncrClosure.Result result;
            long resultValue;
            synchronized (this) {
                Session session = sessions.get(command.getClientId());
                if (session != null && command.getSequence() < session.lastSequence()) {
                    result = IncrClosure.Result.STALE;
                    resultValue = value;
                } else if (session != null && command.getSequence() == session.lastSequence()) {
                    result = IncrClosure.Result.DUPLICATE;
                    resultValue = session.lastValue();
                } else {
                    value += command.getDelta();
                    sessions.put(command.getClientId(), new Session(command.getSequence(), value));
                    result = IncrClosure.Result.APPLIED;
                    resultValue = value;
                }
                appliedIndex = it.index();
            }
            Closure done = it.done();
            if (done != null) {
                if (done instanceof IncrClosure incr) {
                    incr.setResult(result, resultValue);
                }
                done.run(Status.ok());
            }
        }
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        CounterSnapshot snapshot;
        synchronized (this) {
            CounterSnapshot.Builder b = CounterSnapshot.newBuilder().setFormatVersion(FORMAT_VERSION).setValue(value);
            sessions.forEach((client, s) -> b.addSessions(ClientSession.newBuilder().setClientId(client)
                    .setLastSequence(s.lastSequence()).setLastValue(s.lastValue())));
            snapshot = b.build();
        }
        try (OutputStream out = writer.addFile(SNAPSHOT_FILE)) {
            snapshot.writeTo(out);
        } catch (IOException e) {
            LOG.warn("counter snapshot could not be written: {}", e.toString());
            done.run(Status.error(RaftError.STORAGE_ERROR, "counter snapshot could not be written: %s", e.getMessage()));
            return;
        }
        done.run(Status.ok());
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        CounterSnapshot snapshot;
        try (InputStream in = reader.openFile(SNAPSHOT_FILE)) {
            snapshot = CounterSnapshot.parseFrom(in);
        } catch (IOException e) {
            LOG.error("counter snapshot {} could not be read: {}", reader, e.toString());
            return false;
        }
        if (snapshot.getFormatVersion() != FORMAT_VERSION) {
            LOG.error("counter snapshot {} has format {}; this build reads only {}", reader, snapshot.getFormatVersion(), FORMAT_VERSION);
            return false;
        }
        synchronized (this) {
            sessions.clear();
            for (ClientSession s : snapshot.getSessionsList()) {
                sessions.put(s.getClientId(), new Session(s.getLastSequence(), s.getLastValue()));
            }
            value = snapshot.getValue();
            appliedIndex = reader.meta().getLastIncludedIndex();
        }
        LOG.info("counter loaded snapshot at index {}: value {}, {} client sessions", appliedIndex, value, sessions.size());
        return true;
    }

    @Override
    public void onLeaderStart(long term) {
        leaderTerm = term;
        LOG.info("became leader in term {}", term);
    }

    @Override
    public void onLeaderStop(Status status) {
        leaderTerm = -1;
        LOG.info("stopped leading: {}", status);
    }

    /**
     * Tells the counter how to learn its node's role, so {@link #onError} can say whether the node
     * stopped (role error) or goes on applying (a failed snapshot save loses nothing).
     */
    void roleSource(java.util.function.Supplier<io.wheelraft.core.Role> source) {
        this.roleSource = source;
    }

    /** The last error the node reported through {@link #onError}, or null. */
    Status lastError() {
        return lastError;
    }

    @Override
    public void onError(Status error) {
        lastError = error;
        java.util.function.Supplier<io.wheelraft.core.Role> source = roleSource;
        io.wheelraft.core.Role role = null;
        try {
            role = source == null ? null : source.get();
        } catch (RuntimeException e) {
            // the node is shutting down: say only what we know
        }
        if (role == io.wheelraft.core.Role.ERROR || role == io.wheelraft.core.Role.SHUTDOWN) {
            LOG.error("the counter stopped applying at index {}: {}", appliedIndex, error);
        } else if (role == null) {
            LOG.error("the counter's node reported an error (applied index {}): {}", appliedIndex, error);
        } else {
            LOG.error("the counter's node reported an error and goes on applying as {} (applied index {}): {}",
                    role.label(), appliedIndex, error);
        }
    }
}
