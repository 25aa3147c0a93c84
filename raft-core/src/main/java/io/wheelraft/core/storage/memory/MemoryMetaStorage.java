package io.wheelraft.core.storage.memory;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.core.spi.StorageException;

import java.util.Objects;

/**
 * A {@link RaftMetaStorage} held in memory, for tests and the simulated cluster. The term and
 * vote survive {@link #close()} and {@link #reopen()}, so a simulated node restarted on the same
 * instance remembers its vote, as it would on disk.
 *
 * <p>It also guards Raft's safety rules for the term and vote, since breaking them is always a
 * bug in the caller: the term never decreases, and within one term a vote, once recorded, is
 * neither withdrawn nor changed to another peer. Violations throw {@link IllegalArgumentException}.
 *
 * <p>Threading: writes come from one thread at a time; {@link #term()} and {@link #votedFor()}
 * may be read from any thread and always see a pair written together.
 * Faults: {@link #faults()} makes {@link #setTermAndVote} fail before it changes anything.
 */
public final class MemoryMetaStorage implements RaftMetaStorage {

    private record TermAndVote(long term, PeerId votedFor) {
    }

    private final StorageFaults faults = new StorageFaults();
    private volatile TermAndVote current = new TermAndVote(0, null);
    private volatile boolean closed;
    private volatile boolean repairing;

    /** The fault hook of this storage (see {@link StorageFaults}). */
    public StorageFaults faults() {
        return faults;
    }

    @Override
    public long term() {
        checkOpen();
        return current.term();
    }

    @Override
    public PeerId votedFor() {
        checkOpen();
        return current.votedFor();
    }

    /** The term and the vote read together (one consistent pair), as {@code "term=N votedFor=PEER|none"}. */
    @Override
    public String toString() {
        TermAndVote tv = current;
        return "term=" + tv.term() + " votedFor=" + (tv.votedFor() == null ? "none" : tv.votedFor());
    }

    @Override
    public synchronized void setTermAndVote(long term, PeerId votedFor) {
        checkOpen();
        TermAndVote old = current;
        if (term < old.term()) {
            throw new IllegalArgumentException("term must not go backwards: stored term is " + old.term() + ", got " + term);
        }
        if (term == old.term() && old.votedFor() != null && !Objects.equals(old.votedFor(), votedFor)) {
            throw new IllegalArgumentException("term " + term + " already has a vote for " + old.votedFor()
                    + "; it cannot change to " + (votedFor == null ? "no vote" : votedFor));
        }
        faults.beforeWrite();
        current = new TermAndVote(term, votedFor);
    }

    @Override
    public boolean repairing() {
        checkOpen();
        return repairing;
    }

    @Override
    public synchronized void setRepairing(boolean repairing) {
        checkOpen();
        faults.beforeWrite();
        this.repairing = repairing;
    }

    /** Closes the storage; later calls except {@link #reopen()} throw {@link StorageException}. Idempotent. */
    @Override
    public void close() {
        closed = true;
    }

    /**
     * Forgets everything this storage held, as if its file were lost (term 0, no vote, not
     * repairing): the simulation's "meta lost" fault.
     */
    public synchronized void forget() {
        current = new TermAndVote(0, null);
        repairing = false;
    }

    /** Makes a closed storage usable again with the term and vote it held (a restart on the same disk). */
    public void reopen() {
        closed = false;
    }

    private void checkOpen() {
        if (closed) {
            throw new StorageException("memory meta storage is closed");
        }
    }
}
