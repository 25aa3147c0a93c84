package io.wheelraft.client;

import io.wheelraft.client.proto.RetryTableSnapshot;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Wraps the user's {@link StateMachine} so that commands sent with {@link RaftClient} are applied
 * exactly once: the retry table answers a retried command with its first answer and the user's
 * state machine never sees it again, so it needs no deduplication of its own. Install the wrapper
 * as the node's state machine ({@code NodeOptions.stateMachine(wrapper)}) and hand it to
 * {@link RaftClientService#addGroup}.
 *
 * <p>The retry table is saved in every snapshot as one more file,
 * {@value #RETRY_TABLE_FILE}, beside the user's files, and loaded with them.
 *
 * <p>Threading: every {@link StateMachine} method runs on the node's apply thread, as usual;
 * {@link #query} may be called from any thread and never runs at the same time as
 * {@link #onApply} or a snapshot load (one lock).
 */
public final class ExactlyOnceStateMachine implements StateMachine {

    /** The snapshot file holding the retry table. */
    public static final String RETRY_TABLE_FILE = "raft-client-retry-table";

    private static final Logger LOG = LoggerFactory.getLogger(ExactlyOnceStateMachine.class);

    /**
     * Limits of the retry table.
     *
     * @param sessionExpiryMs       a client idle this long (by the leaders' clocks, carried in the log) is forgotten;
     *                              keep it far above the longest client deadline
     * @param maxSessions           clients remembered at once; beyond it the one idle longest is evicted
     * @param maxAnswersPerSession  unacknowledged answers kept per client (at least its outstanding calls)
     */
    public record Options(long sessionExpiryMs, int maxSessions, int maxAnswersPerSession) {
        public static Options defaults() {
            return new Options(10 * 60_000L, 100_000, 65_536);
        }
    }

    private final StateMachine user;
    private final QueryHandler queries;
    private final RetryTable table;
    private final Object lock = new Object();
    private volatile long appliedIndex;

    public ExactlyOnceStateMachine(StateMachine user) {
        this(user, Options.defaults());
    }

    /**
     * @param user the service's state machine; if it implements {@link QueryHandler} it also answers queries
     */
    public ExactlyOnceStateMachine(StateMachine user, Options options) {
        this.user = Objects.requireNonNull(user, "user state machine");
        this.queries = user instanceof QueryHandler q ? q : null;
        this.table = new RetryTable(options.sessionExpiryMs(), options.maxSessions(), options.maxAnswersPerSession());
    }

    /** The state machine this one wraps. */
    public StateMachine delegate() {
        return user;
    }

    /** The index of the last entry applied here (any thread). */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** Clients the retry table remembers now. */
    public int sessionCount() {
        synchronized (lock) {
            return table.size();
        }
    }

    /** Sessions dropped for idleness since the group began (part of the replicated state). */
    public long expiredSessions() {
        synchronized (lock) {
            return table.expired();
        }
    }

    /** Whether the retry table remembers {@code clientId} (tests, diagnostics). */
    public boolean remembers(String clientId) {
        synchronized (lock) {
            return table.knows(clientId);
        }
    }

    @Override
    public void onApply(Iterator iterator) {
        SendGathering.ANSWERS.gatherWhile(() -> {
            synchronized (lock) {
                SessionIterator view = new SessionIterator(new IndexTracking(iterator), table);
                user.onApply(view);
                view.finishCurrent();
            }
        });
    }

    /**
     * Answers {@code query} with the user's {@link QueryHandler}, between two apply batches.
     *
     * @throws UnsupportedOperationException if the user's state machine answers no queries
     */
    QueryAnswer query(ByteBuffer query) {
        if (queries == null) {
            throw new UnsupportedOperationException(user.getClass().getName() + " does not implement QueryHandler, so it answers no queries");
        }
        synchronized (lock) {
            return new QueryAnswer(queries.query(query), appliedIndex);
        }
    }

    /** A query's answer and the index of the last command the state it was read from includes. */
    record QueryAnswer(byte[] result, long index) {
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        RetryTableSnapshot snapshot;
        synchronized (lock) {
            snapshot = table.toSnapshot();
        }
        try (OutputStream out = writer.addFile(RETRY_TABLE_FILE)) {
            snapshot.writeTo(out);
        } catch (IOException e) {
            LOG.warn("the retry table could not be written to the snapshot: {}", e.toString());
            done.run(Status.error(RaftError.STORAGE_ERROR, "retry table could not be written: %s", e.getMessage()));
            return;
        }
        user.onSnapshotSave(writer, done);
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        synchronized (lock) {
            boolean hasTable = reader.meta().getFilesList().stream().anyMatch(f -> f.getName().equals(RETRY_TABLE_FILE));
            try {
                if (hasTable) {
                    try (InputStream in = reader.openFile(RETRY_TABLE_FILE)) {
                        table.load(RetryTableSnapshot.parseFrom(in));
                    }
                } else {
                    table.load(RetryTableSnapshot.newBuilder().setFormatVersion(RetryTable.FORMAT_VERSION).build());
                }
            } catch (IOException | IllegalArgumentException e) {
                LOG.error("the retry table of snapshot {} could not be loaded: {}", reader.meta().getLastIncludedIndex(), e.getMessage());
                return false;
            }
            if (!user.onSnapshotLoad(reader)) {
                return false;
            }
            appliedIndex = reader.meta().getLastIncludedIndex();
            return true;
        }
    }

    @Override
    public void onLeaderStart(long term) {
        user.onLeaderStart(term);
    }

    @Override
    public void onLeaderStop(Status status) {
        user.onLeaderStop(status);
    }

    @Override
    public void onConfigurationCommitted(Configuration configuration) {
        user.onConfigurationCommitted(configuration);
    }

    @Override
    public void onError(Status error) {
        user.onError(error);
    }

    @Override
    public void onShutdown() {
        user.onShutdown();
    }

    /** Notes the index of each entry handed out, so {@link #appliedIndex} follows the batch. */
    private final class IndexTracking implements Iterator {
        private final Iterator outer;

        IndexTracking(Iterator outer) {
            this.outer = outer;
        }

        @Override
        public boolean hasNext() {
            return outer.hasNext();
        }

        @Override
        public ByteBuffer next() {
            ByteBuffer b = outer.next();
            appliedIndex = outer.index();
            return b;
        }

        @Override
        public long index() {
            return outer.index();
        }

        @Override
        public long term() {
            return outer.term();
        }

        @Override
        public ByteBuffer data() {
            return outer.data();
        }

        @Override
        public Closure done() {
            return outer.done();
        }

        @Override
        public void setErrorAndRollback(Status error) {
            outer.setErrorAndRollback(error);
        }
    }
}
