package io.wheelraft.core.sim;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.spi.RaftMetaStorage;
import io.wheelraft.timer.Timer;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One incarnation's view of a member's meta storage that writes term and vote later, as the
 * RocksDB store does when it syncs many groups' changes together: the write reaches the storage,
 * and the node hears it is durable, 0-2 ms later on the simulation's timer (the seed picks), so
 * simulated nodes take the same paused-lane path as real ones. A write still under way when the
 * member crashes never reaches the storage (it was not durable; nothing was acknowledged on it).
 * Simulation thread only.
 */
final class SimLaterMetaStorage implements RaftMetaStorage {

    private final RaftMetaStorage storage;
    private final Timer timer;
    private final Random random;
    private boolean crashed;

    SimLaterMetaStorage(RaftMetaStorage storage, Timer timer, Random random) {
        this.storage = storage;
        this.timer = timer;
        this.random = random;
    }

    /** The member's process died: writes under way are lost. */
    void crash() {
        crashed = true;
    }

    @Override
    public boolean writesLater() {
        return true;
    }

    @Override
    public void setTermAndVoteLater(long term, PeerId votedFor, Consumer<RuntimeException> done) {
        timer.newTimeout(t -> {
            if (crashed) {
                return;
            }
            try {
                storage.setTermAndVote(term, votedFor);
            } catch (RuntimeException e) {
                done.accept(e);
                return;
            }
            done.accept(null);
        }, random.nextInt(3), TimeUnit.MILLISECONDS);
    }

    @Override
    public long term() {
        return storage.term();
    }

    @Override
    public PeerId votedFor() {
        return storage.votedFor();
    }

    @Override
    public void setTermAndVote(long term, PeerId votedFor) {
        storage.setTermAndVote(term, votedFor);
    }

    @Override
    public boolean repairing() {
        return storage.repairing();
    }

    @Override
    public void setRepairing(boolean repairing) {
        storage.setRepairing(repairing);
    }

    @Override
    public void close() {
        storage.close();
    }
}
