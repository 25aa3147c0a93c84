package io.wheelraft.example;

import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.client.CommandResult;
import io.wheelraft.client.QueryHandler;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.example.proto.CounterCommand;
import io.wheelraft.example.proto.CounterSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The replicated counter: one value. Increments are exactly-once without any code here: the node
 * runs this state machine inside raft-client's {@code ExactlyOnceStateMachine}, whose retry table
 * answers a retried increment with its first answer, so {@link #onApply} sees each increment once.
 *
 * <p>An increment answers the new value and a query (any bytes) answers the value, both as 8
 * bytes big-endian ({@link #decodeValue}).
 *
 * <p>Threading: every callback runs on the node's apply thread; {@link #query} runs between apply
 * batches (the wrapper's lock); {@link #value()} and {@link #appliedIndex()} may be read from any
 * thread (volatile).
 */
public final class CounterStateMachine extends StateMachineAdapter implements QueryHandler {

    /** The one file of a counter snapshot. */
    public static final String SNAPSHOT_FILE = "counter.snapshot";
    static final int FORMAT_VERSION = 2;

    private static final Logger LOG = LoggerFactory.getLogger(CounterStateMachine.class);

    private volatile long value;
    private volatile long appliedIndex;
    private volatile long leaderTerm = -1;
    private volatile java.util.function.Supplier<io.wheelraft.core.Role> roleSource;
    private volatile Status lastError;
    /** Whether gaining and losing leadership is logged at INFO (its lines name no group: the single counter's). */
    private final boolean logLeadership;
    /** Told true when this replica starts leading and false when it stops (in that order, on the apply lane). */
    private volatile Consumer<Boolean> leadershipListener = leading -> { };

    /** The single counter: leadership changes are logged at INFO (the chaos tooling reads them). */
    public CounterStateMachine() {
        this(true);
    }

    /** {@code logLeadership} false: one of many groups' counters, whose node counts such changes instead. */
    public CounterStateMachine(boolean logLeadership) {
        this.logLeadership = logLeadership;
    }

    /** The current value (as applied on this node; not a linearizable read by itself). */
    public long value() {
        return value;
    }

    /** The index of the last increment this state machine applied. */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** The term in which this node leads, or -1 when it does not. */
    public long leaderTerm() {
        return leaderTerm;
    }

    /** Encodes one increment: the command a client sends. */
    public static byte[] encode(long delta) {
        return CounterCommand.newBuilder().setFormatVersion(FORMAT_VERSION).setDelta(delta).build().toByteArray();
    }

    /** Decodes an answer (the value after an increment, or the value read). */
    public static long decodeValue(byte[] answer) {
        if (answer.length != Long.BYTES) {
            throw new IllegalArgumentException("a counter answer is 8 bytes, got " + answer.length);
        }
        return ByteBuffer.wrap(answer).getLong();
    }

    private static byte[] valueBytes(long v) {
        return ByteBuffer.allocate(Long.BYTES).putLong(v).array();
    }

    @Override
    public void onApply(Iterator it) {
        while (it.hasNext()) {
            ByteBuffer data = it.next();
            CounterCommand command;
            try {
                command = CounterCommand.parseFrom(data.duplicate());
            } catch (InvalidProtocolBufferException e) {
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
            long v = value + command.getDelta();
            value = v;
            appliedIndex = it.index();
            if (it.done() instanceof CommandResult result) {
                result.setResult(valueBytes(v));
            }
        }
    }

    @Override
    public byte[] query(ByteBuffer query) {
        return valueBytes(value);
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        CounterSnapshot snapshot = CounterSnapshot.newBuilder().setFormatVersion(FORMAT_VERSION).setValue(value).build();
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
        value = snapshot.getValue();
        appliedIndex = reader.meta().getLastIncludedIndex();
        LOG.info("counter loaded snapshot at index {}: value {}", appliedIndex, value);
        return true;
    }

    @Override
    public void onLeaderStart(long term) {
        leaderTerm = term;
        leadershipListener.accept(true);
        if (logLeadership) {
            LOG.info("became leader in term {}", term);
        }
    }

    @Override
    public void onLeaderStop(Status status) {
        leaderTerm = -1;
        leadershipListener.accept(false);
        if (logLeadership) {
            LOG.info("stopped leading: {}", status);
        }
    }

    /** Whom to tell when this replica starts (true) and stops (false) leading; set before its node starts. */
    void leadershipListener(Consumer<Boolean> listener) {
        this.leadershipListener = Objects.requireNonNull(listener, "listener");
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
